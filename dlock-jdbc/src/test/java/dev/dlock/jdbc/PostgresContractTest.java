package dev.dlock.jdbc;

import dev.dlock.LockClient;
import dev.dlock.tck.LockContractTest;
import dev.dlock.tck.TcpProxy;
import org.junit.jupiter.api.AfterAll;
import org.junit.jupiter.api.BeforeAll;

/** The full contract on the machine's database, through a {@link TcpProxy} so that outages can be faked. */
class PostgresContractTest extends LockContractTest {
    private static final String DIRECT = TestDatabases.postgres(TestDatabases.PG_PORT);
    private static TcpProxy proxy;
    private static String prefix;

    @BeforeAll
    static void setUp() throws Exception {
        prefix = TestDatabases.prefix("contract");
        TestDatabases.createTables(DIRECT, Dialect.POSTGRESQL, prefix);
        proxy = TcpProxy.start("127.0.0.1", TestDatabases.PG_PORT);
    }

    @AfterAll
    static void tearDown() throws Exception {
        proxy.close();
        TestDatabases.dropTables(DIRECT, prefix);
    }

    private static String viaProxy() {
        return TestDatabases.postgres(proxy.port());
    }

    @Override
    protected LockClient.Builder newClientBuilder() {
        return LockClient.builder(viaProxy() + "&dlock.tablePrefix=" + prefix);
    }

    @Override
    protected void stopStore() {
        proxy.cut();
    }

    @Override
    protected void startStore() throws Exception {
        ContractSupport.restoreAndWait(proxy, viaProxy());
    }
}
