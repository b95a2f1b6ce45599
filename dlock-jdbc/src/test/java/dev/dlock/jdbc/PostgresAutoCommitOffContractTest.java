package dev.dlock.jdbc;

import com.zaxxer.hikari.HikariConfig;
import com.zaxxer.hikari.HikariDataSource;
import dev.dlock.LockClient;
import org.junit.jupiter.api.extension.RegisterExtension;

/**
 * The full contract through a {@code DataSource} pool with auto-commit off (HikariCP {@code
 * autoCommit=false}, as Spring's {@code spring.datasource.hikari.auto-commit=false} makes it). Each
 * client gets a small pool of its own, closed with it (the suite makes many clients, some of which it
 * abandons on purpose); inside, the backend uses the pool exactly as one given to {@link
 * JdbcBackends#builder}, including its listener connection.
 */
class PostgresAutoCommitOffContractTest extends DatabaseContractTest {
    @RegisterExtension
    static final ProxiedDatabase DATABASE = ProxiedDatabase.postgres("acoffcontract");

    @Override
    ProxiedDatabase database() {
        return DATABASE;
    }

    @Override
    protected LockClient.Builder newClientBuilder() {
        return LockClient.builder(context -> {
            HikariConfig config = new HikariConfig();
            config.setJdbcUrl(DATABASE.viaProxy());
            config.setAutoCommit(false);
            config.setMaximumPoolSize(6);
            config.setMinimumIdle(1);
            // As the backend's own pool for a URI: a loaded machine may take a second to connect.
            config.setConnectionTimeout(context.operationTimeout().toMillis());
            config.setValidationTimeout(500);
            config.setInitializationFailTimeout(-1);
            config.setDataSourceProperties(JdbcBackends.driverProperties(
                    Dialect.POSTGRESQL, context.operationTimeout().toMillis()));
            HikariDataSource pool = new HikariDataSource(config);
            try {
                return JdbcBackends.open(
                        pool,
                        pool,
                        null,
                        JdbcOptions.DEFAULTS.withTablePrefix(DATABASE.prefix()),
                        context,
                        pool::getConnection);
            } catch (RuntimeException e) {
                pool.close();
                throw e;
            }
        });
    }
}
