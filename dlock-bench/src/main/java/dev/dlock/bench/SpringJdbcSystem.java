package dev.dlock.bench;

import com.zaxxer.hikari.HikariConfig;
import com.zaxxer.hikari.HikariDataSource;
import java.io.IOException;
import java.io.InputStream;
import java.nio.charset.StandardCharsets;
import java.sql.Connection;
import java.sql.SQLException;
import java.sql.Statement;
import java.util.concurrent.locks.Lock;
import org.springframework.integration.jdbc.lock.DefaultLockRepository;
import org.springframework.integration.jdbc.lock.JdbcLockRegistry;
import org.springframework.jdbc.datasource.DataSourceTransactionManager;

/**
 * Spring Integration's {@code JdbcLockRegistry} on PostgreSQL: one {@code DefaultLockRepository} with its
 * own HikariCP pool per bench client, default TTL and default 100 ms idle between tries (it polls; there
 * is no wake-up).
 *
 * <p>Setup: {@link #unavailableReason} creates Spring's {@code INT_LOCK} table when it is missing, using
 * the DDL of the {@code schema-postgresql.sql} script shipped in Spring Integration's jar, and removes rows
 * of the bench's region left by an earlier, interrupted run.
 *
 * <p>Spring has no background renewal for JDBC locks (only a manual {@code renewLock}), so this system
 * does not take part in the held scenario.
 */
final class SpringJdbcSystem implements LockSystem {
    private static final String REGION = "dlock-bench";
    private static final String SCHEMA = "/org/springframework/integration/jdbc/schema-postgresql.sql";

    @Override
    public String name() {
        return "spring-jdbc";
    }

    @Override
    public String backend() {
        return "postgresql";
    }

    @Override
    public boolean supports(Scenario scenario) {
        return scenario != Scenario.HELD;
    }

    @Override
    public String unavailableReason(Endpoints endpoints) {
        String down = Probes.tcp(endpoints.postgres());
        if (down != null) {
            return down;
        }
        try (HikariDataSource data = pool(endpoints, 1);
                Connection c = data.getConnection();
                Statement s = c.createStatement()) {
            s.execute(lockTableDdl());
            s.execute("DELETE FROM INT_LOCK WHERE REGION = '" + REGION + "'");
            return null;
        } catch (SQLException | IOException | RuntimeException e) {
            return "cannot prepare Spring's INT_LOCK table: " + e.getMessage();
        }
    }

    /** Spring's own CREATE TABLE INT_LOCK statement, made idempotent. */
    static String lockTableDdl() throws IOException {
        try (InputStream in = JdbcLockRegistry.class.getResourceAsStream(SCHEMA)) {
            if (in == null) {
                throw new IOException(SCHEMA + " is not in the Spring Integration JDBC jar");
            }
            for (String statement : new String(in.readAllBytes(), StandardCharsets.UTF_8).split(";")) {
                String trimmed = statement.strip();
                if (trimmed.matches("(?is)CREATE TABLE\\s+INT_LOCK\\b.*")) {
                    return trimmed.replaceFirst("(?i)CREATE TABLE", "CREATE TABLE IF NOT EXISTS");
                }
            }
            throw new IOException(SCHEMA + " has no CREATE TABLE INT_LOCK statement");
        }
    }

    static HikariDataSource pool(Endpoints endpoints, int size) {
        HikariConfig config = new HikariConfig();
        config.setJdbcUrl(endpoints.postgresJdbcUrl());
        config.setMaximumPoolSize(size);
        config.setMinimumIdle(size);
        config.setPoolName("bench-spring-jdbc");
        return new HikariDataSource(config);
    }

    @Override
    public Client open(Endpoints endpoints, int threads, boolean renewal) {
        HikariDataSource data = pool(endpoints, threads + 1);
        DefaultLockRepository repository = new DefaultLockRepository(data);
        repository.setRegion(REGION);
        repository.setTransactionManager(new DataSourceTransactionManager(data));
        repository.afterPropertiesSet();
        repository.afterSingletonsInstantiated();
        repository.start();
        JdbcLockRegistry registry = new JdbcLockRegistry(repository);
        return new Client() {
            @Override
            public BenchLock lock(String name) {
                Lock lock = registry.obtain(name);
                return BenchLock.of(lock);
            }

            @Override
            public void close() {
                try {
                    repository.close();
                } finally {
                    data.close();
                }
            }
        };
    }
}
