package dev.dlock.jdbc;

import com.zaxxer.hikari.HikariConfig;
import com.zaxxer.hikari.HikariDataSource;
import dev.dlock.LockClient;
import dev.dlock.tck.LockContractTest;
import dev.dlock.tck.TcpProxy;
import org.junit.jupiter.api.AfterAll;
import org.junit.jupiter.api.BeforeAll;

/**
 * The full contract through a {@code DataSource} pool with auto-commit off (HikariCP {@code
 * autoCommit=false}, as Spring's {@code spring.datasource.hikari.auto-commit=false} makes it), via a
 * {@link TcpProxy} so that outages can be faked. Each client gets a small pool of its own, closed with it
 * (the suite makes many clients, some of which it abandons on purpose); inside, the backend uses the pool
 * exactly as one given to {@link JdbcBackends#builder}, including its listener connection.
 */
class PostgresAutoCommitOffContractTest extends LockContractTest {
    private static final String DIRECT = TestDatabases.postgres(TestDatabases.PG_PORT);
    private static TcpProxy proxy;
    private static String prefix;

    @BeforeAll
    static void setUp() throws Exception {
        prefix = TestDatabases.prefix("acoffcontract");
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
        return LockClient.builder(context -> {
            HikariConfig config = new HikariConfig();
            config.setJdbcUrl(viaProxy());
            config.setAutoCommit(false);
            config.setMaximumPoolSize(6);
            config.setMinimumIdle(1);
            config.setConnectionTimeout(1_000);
            config.setValidationTimeout(500);
            config.setInitializationFailTimeout(-1);
            config.setDataSourceProperties(JdbcBackends.driverProperties(
                    Dialect.POSTGRESQL, context.operationTimeout().toMillis()));
            HikariDataSource pool = new HikariDataSource(config);
            try {
                return JdbcBackends.open(
                        pool, pool, null, JdbcOptions.DEFAULTS.withTablePrefix(prefix), context, pool::getConnection);
            } catch (RuntimeException e) {
                pool.close();
                throw e;
            }
        });
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
