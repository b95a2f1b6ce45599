package dev.dlock.jdbc;

import dev.dlock.LockClient;
import dev.dlock.tck.LockContractTest;
import dev.dlock.tck.TcpProxy;
import org.h2.tools.Server;
import org.junit.jupiter.api.AfterAll;
import org.junit.jupiter.api.BeforeAll;

/**
 * The full contract on H2: an H2 TCP server in this JVM holding an in-memory database, reached through a
 * {@link TcpProxy} so that outages can be faked.
 */
class H2ContractTest extends LockContractTest {
    private static Server server;
    private static TcpProxy proxy;
    private static String database;

    @BeforeAll
    static void setUp() throws Exception {
        server = TestDatabases.startH2Server();
        database = TestDatabases.prefix("h2contract");
        TestDatabases.createTables(TestDatabases.h2(server.getPort(), database), Dialect.H2, "dlock_");
        proxy = TcpProxy.start("127.0.0.1", server.getPort());
    }

    @AfterAll
    static void tearDown() throws Exception {
        proxy.close();
        TestDatabases.dropTables(TestDatabases.h2(server.getPort(), database), "dlock_");
        server.stop();
    }

    private static String viaProxy() {
        return TestDatabases.h2(proxy.port(), database);
    }

    @Override
    protected LockClient.Builder newClientBuilder() {
        return LockClient.builder(viaProxy());
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
