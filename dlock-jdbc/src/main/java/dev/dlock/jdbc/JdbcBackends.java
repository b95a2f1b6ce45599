package dev.dlock.jdbc;

import com.zaxxer.hikari.HikariConfig;
import com.zaxxer.hikari.HikariDataSource;
import com.zaxxer.hikari.SQLExceptionOverride;
import dev.dlock.LockBackendException;
import dev.dlock.spi.BackendContext;
import dev.dlock.spi.LockBackend;
import dev.dlock.spi.LockBackendFactory;
import java.sql.Connection;
import java.sql.DriverManager;
import java.sql.SQLException;
import java.sql.Statement;
import java.util.Objects;
import java.util.Properties;
import java.util.concurrent.atomic.AtomicInteger;
import javax.sql.DataSource;

/**
 * Locks in a SQL database: PostgreSQL, MySQL, MariaDB or H2.
 *
 * <h2>Connecting</h2>
 *
 * <p>With a {@code DataSource} the application already has (any pool): {@code JdbcBackends.of(dataSource)}
 * with the default settings, or {@code JdbcBackends.builder(dataSource)} to set them first:
 *
 * <!-- example: jdbc-datasource (JdbcBackendsExamplesTest; a test checks that both are the same) -->
 * <pre>{@code
 * LockBackendFactory backend = JdbcBackends.builder(dataSource)
 *         .tablePrefix("app_lock_")
 *         .createTables(true)
 *         .build();
 * try (LockClient locks = LockClient.builder(backend).build()) {
 *     try (Lease lease = locks.lock("report").acquire(Duration.ofSeconds(5))) {
 *         writeReport(lease.fencingToken());
 *     }
 * }
 * }</pre>
 *
 * <p>Or by URI, for which the backend makes its own HikariCP pool with connect and socket timeouts taken
 * from the client's operation timeout: {@code
 * LockClient.connect("jdbc:postgresql://db:5432/app?user=app&password=secret&dlock.createTables=true")}.
 *
 * <p>URI parameters of dlock (removed before the URL reaches the driver): {@code dlock.tablePrefix}
 * (default {@code dlock_}), {@code dlock.createTables} (default false), {@code dlock.advisory} (default
 * false), {@code dlock.threads} (default 4). H2 URLs take them as {@code ;dlock.createTables=true}.
 *
 * <h2>Tables</h2>
 *
 * <p>Two tables, {@code <prefix>locks} and {@code <prefix>entries}. The DDL for each database ships in
 * this jar as {@code dev/dlock/jdbc/postgresql.sql}, {@code mysql.sql} and {@code h2.sql} (replace
 * {@code ${prefix}}); or let the backend run it with {@link Builder#createTables(boolean)}. Rows of
 * {@code <prefix>locks} are never deleted: they keep the fencing tokens.
 *
 * <h2>Guarantees</h2>
 *
 * <p>Every expiry is decided by the database's clock. Fencing tokens are incremented in the statement or
 * transaction that grants, and survive restarts and expiries. On PostgreSQL, waiters are woken by {@code
 * LISTEN/NOTIFY} on one dedicated connection per client; on MySQL, MariaDB and H2 they retry with bounded
 * exponential backoff with jitter (10 to 200 ms). Renewals of one client are one statement per tick.
 *
 * <p>Any pool works, whatever its settings: each call sets auto-commit on the connection it borrows and
 * restores it (a pool with {@code autoCommit=false} would otherwise roll back grants and releases), and
 * the listener and advisory connections go back to the pool without listening or holding locks. Grant
 * transactions carry server-side lock and idle-transaction timeouts derived from the operation timeout,
 * so a client that stops mid-transaction holds other clients up for about one operation timeout.
 */
public final class JdbcBackends {
    private static final AtomicInteger POOLS = new AtomicInteger();

    private JdbcBackends() {}

    /**
     * A backend factory over a data source, with default settings: tables {@code dlock_locks} and {@code
     * dlock_entries}, which must exist.
     *
     * @param dataSource any data source of PostgreSQL, MySQL, MariaDB or H2
     * @return a factory for {@code LockClient.builder(LockBackendFactory)}
     */
    public static LockBackendFactory of(DataSource dataSource) {
        return builder(dataSource).build();
    }

    /**
     * Starts configuring a backend over a data source.
     *
     * @param dataSource any data source of PostgreSQL, MySQL, MariaDB or H2
     * @return a builder
     */
    public static Builder builder(DataSource dataSource) {
        return new Builder(Objects.requireNonNull(dataSource, "dataSource must not be null"));
    }

    /** Settings of a backend over a {@code DataSource}. Every setter validates at once. */
    public static final class Builder {
        private final DataSource dataSource;
        private JdbcOptions options = JdbcOptions.DEFAULTS;

        private Builder(DataSource dataSource) {
            this.dataSource = dataSource;
        }

        /**
         * The prefix of the table names. Default {@code dlock_}.
         *
         * @param prefix 1 to 40 characters of {@code [a-z0-9_]}, not starting with a digit
         * @return this builder
         * @throws IllegalArgumentException for another prefix
         */
        public Builder tablePrefix(String prefix) {
            options = options.withTablePrefix(prefix);
            return this;
        }

        /**
         * Whether to create the tables if they are missing when the backend opens. Default false: the
         * tables must exist (see the shipped DDL).
         *
         * @param create true to run {@code CREATE TABLE IF NOT EXISTS}
         * @return this builder
         */
        public Builder createTables(boolean create) {
            options = options.withCreateTables(create);
            return this;
        }

        /**
         * Whether exclusive locks use the database's advisory locks ({@code pg_advisory_lock}, {@code
         * GET_LOCK}) on one dedicated session instead of lease rows. Default false. Holds then last as long
         * as that session, not a lease time; they are all lost together when it dies, and vanish on
         * failover. Fencing tokens still come from the table. Not available on H2.
         *
         * @param advisory true for advisory locks
         * @return this builder
         */
        public Builder advisory(boolean advisory) {
            options = options.withAdvisory(advisory);
            return this;
        }

        /**
         * How many threads run the backend's blocking JDBC calls. Default 4.
         *
         * @param threads 1 to 64
         * @return this builder
         */
        public Builder threads(int threads) {
            options = options.withThreads(threads);
            return this;
        }

        /**
         * The factory to pass to {@code LockClient.builder(LockBackendFactory)}.
         *
         * @return a factory; the data source stays the application's and is not closed by the client
         */
        public LockBackendFactory build() {
            JdbcOptions fixed = options;
            DataSource ds = dataSource;
            return context -> open(ds, null, null, fixed, context, ds::getConnection);
        }
    }

    /** Opens a backend for a {@code jdbc:} URI with its own pool. */
    static LockBackendFactory forUri(String uri) {
        JdbcUri parsed = JdbcUri.parse(uri);
        return context -> {
            Properties props = driverProperties(
                    parsed.dialect(), context.operationTimeout().toMillis());
            HikariConfig config = new HikariConfig();
            config.setJdbcUrl(parsed.jdbcUrl());
            config.setDataSourceProperties(props);
            config.setPoolName("dlock-jdbc-pool-" + POOLS.incrementAndGet());
            config.setMaximumPoolSize(parsed.options().threads());
            config.setMinimumIdle(1);
            long timeout = Math.max(250, context.operationTimeout().toMillis());
            config.setConnectionTimeout(timeout);
            config.setValidationTimeout(Math.min(timeout, 5000));
            config.setInitializationFailTimeout(timeout);
            config.setTransactionIsolation("TRANSACTION_READ_COMMITTED");
            // H2 reports a dead server session with its own codes, not SQLState 08: evict those too.
            config.setExceptionOverride(new SQLExceptionOverride() {
                @java.lang.Override
                public SQLExceptionOverride.Override adjudicate(SQLException e) {
                    return JdbcBackend.isBrokenConnection(e)
                            ? SQLExceptionOverride.Override.MUST_EVICT
                            : SQLExceptionOverride.Override.CONTINUE_EVICT;
                }
            });
            HikariDataSource pool;
            try {
                pool = new HikariDataSource(config);
            } catch (RuntimeException e) {
                throw new LockBackendException(
                        "cannot connect to " + redact(parsed.jdbcUrl()) + ": " + rootMessage(e), e);
            }
            try {
                return open(
                        pool,
                        pool,
                        parsed.dialect(),
                        parsed.options(),
                        context,
                        () -> DriverManager.getConnection(parsed.jdbcUrl(), props));
            } catch (RuntimeException e) {
                pool.close();
                throw e;
            }
        };
    }

    /** Connect and socket timeouts per driver, so that a dead database fails calls in time. */
    static Properties driverProperties(Dialect dialect, long timeoutMillis) {
        Properties props = new Properties();
        long socketMillis = timeoutMillis + 1000;
        switch (dialect) {
            case POSTGRESQL -> {
                String seconds = Long.toString(Math.max(1, (timeoutMillis + 999) / 1000));
                props.setProperty("connectTimeout", seconds);
                props.setProperty("loginTimeout", seconds);
                props.setProperty("socketTimeout", Long.toString((socketMillis + 999) / 1000));
                props.setProperty("tcpKeepAlive", "true");
            }
            case MYSQL -> {
                props.setProperty("connectTimeout", Long.toString(Math.max(1, timeoutMillis)));
                props.setProperty("socketTimeout", Long.toString(socketMillis));
            }
            case H2 -> {
                // In-process or server mode; H2 has no per-connection socket timeout.
            }
        }
        return props;
    }

    /**
     * Opens a backend over a data source; {@code ownedPool}, if not null, is closed with the backend. A
     * null dialect is read from the database.
     */
    static LockBackend open(
            DataSource dataSource,
            AutoCloseable ownedPool,
            Dialect knownDialect,
            JdbcOptions options,
            BackendContext context,
            DedicatedSession.Source dedicated) {
        Dialect dialect = knownDialect;
        LeaseTable table;
        String clockSource;
        try (Connection c = dataSource.getConnection()) {
            clockSource = clockSource(c.getMetaData().getURL());
            if (dialect == null) {
                dialect = Dialect.ofProduct(c.getMetaData().getDatabaseProductName());
            }
            table = new LeaseTable(
                    dialect, options.tablePrefix(), context.operationTimeout().toMillis());
            if (options.createTables()) {
                createTables(c, table);
            } else {
                Transactions.autoCommitted(c, () -> checkTables(c, table, false));
            }
        } catch (SQLException e) {
            throw new LockBackendException("cannot open the JDBC lock backend: " + e.getMessage(), e);
        }
        if (options.createTables()) {
            // Seen from another connection: tables that only the creating transaction saw would be lost.
            try (Connection c = dataSource.getConnection()) {
                Transactions.autoCommitted(c, () -> checkTables(c, table, true));
            } catch (SQLException e) {
                throw new LockBackendException("cannot open the JDBC lock backend: " + e.getMessage(), e);
            }
        }
        return new JdbcBackend(
                dataSource, ownedPool, table, clockSource, context, options.threads(), dedicated, options.advisory());
    }

    /** The name of the database's clock: its URL without options (which may hold credentials). */
    private static String clockSource(String url) {
        if (url == null) {
            return "the database";
        }
        int options = url.indexOf('?');
        int semicolon = url.indexOf(';');
        int end = options < 0 ? semicolon : semicolon < 0 ? options : Math.min(options, semicolon);
        String plain = end < 0 ? url : url.substring(0, end);
        return plain.replaceFirst("//[^/@]*@", "//"); // user:password@host
    }

    private static void createTables(Connection c, LeaseTable table) throws SQLException {
        // Clients creating the same tables at once may collide in the catalog (PostgreSQL: a unique
        // violation on pg_type even with IF NOT EXISTS), once per DDL statement; a later look finds
        // what the others made. Bounded: a real failure repeats and is reported.
        for (int attempt = 1; ; attempt++) {
            try {
                table.createTablesIfMissing(c);
                return;
            } catch (SQLException e) {
                if (attempt == CREATE_ATTEMPTS) {
                    throw e;
                }
                try {
                    Thread.sleep(
                            java.util.concurrent.ThreadLocalRandom.current().nextLong(10, 60));
                } catch (InterruptedException interrupted) {
                    Thread.currentThread().interrupt();
                    throw e;
                }
            }
        }
    }

    private static final int CREATE_ATTEMPTS = 5;

    private static Void checkTables(Connection c, LeaseTable table, boolean created) throws SQLException {
        for (String name : new String[] {table.prefix() + "locks", table.prefix() + "entries"}) {
            try (Statement st = c.createStatement()) {
                st.executeQuery("SELECT 1 FROM " + name + " WHERE 1 = 0").close();
            } catch (SQLException e) {
                throw new SQLException(
                        created
                                ? "table " + name + " was created but another connection cannot read it ("
                                        + e.getMessage() + "); check the database user's rights and schema"
                                : "table " + name + " is missing or unreadable (" + e.getMessage()
                                        + "); create it with "
                                        + table.dialect().ddlResource().substring(1)
                                        + " from the dlock-jdbc jar, or enable createTables",
                        e);
            }
        }
        return null;
    }

    private static String redact(String url) {
        return url.replaceAll("(?i)(password=)[^&;]*", "$1***");
    }

    private static String rootMessage(Throwable e) {
        Throwable t = e;
        while (t.getCause() != null && t.getCause() != t) {
            t = t.getCause();
        }
        return t.getMessage() != null ? t.getMessage() : t.toString();
    }
}
