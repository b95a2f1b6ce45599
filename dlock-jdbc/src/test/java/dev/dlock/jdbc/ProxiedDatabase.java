package dev.dlock.jdbc;

import dev.dlock.testsupport.TcpProxy;
import java.sql.Connection;
import java.sql.DriverManager;
import java.sql.SQLException;
import java.time.Duration;
import org.h2.tools.Server;
import org.junit.jupiter.api.extension.AfterAllCallback;
import org.junit.jupiter.api.extension.BeforeAllCallback;
import org.junit.jupiter.api.extension.ExtensionContext;

/**
 * One database for a whole test class, reached through a {@link TcpProxy} so that outages can be faked:
 * the machine's PostgreSQL or MariaDB, or an H2 TCP server in this JVM. Registered as a static
 * {@code @RegisterExtension} field, it creates lease tables of a fresh prefix before the class and drops
 * them (and stops H2) after it. JUnit calls a class's extensions for its {@code @Nested} classes too (the
 * contract suite's sections): only the outermost class sets up and tears down, the sections share it.
 */
final class ProxiedDatabase implements BeforeAllCallback, AfterAllCallback {
    private final Dialect dialect;
    private final String tag;
    private Server h2;
    private String database;
    private int port;
    private String prefix;
    private TcpProxy proxy;
    /** How many of the class and its {@code @Nested} sections are running now. */
    private int depth;

    private ProxiedDatabase(Dialect dialect, String tag) {
        this.dialect = dialect;
        this.tag = tag;
    }

    static ProxiedDatabase postgres(String tag) {
        return new ProxiedDatabase(Dialect.POSTGRESQL, tag);
    }

    static ProxiedDatabase mariadb(String tag) {
        return new ProxiedDatabase(Dialect.MYSQL, tag);
    }

    static ProxiedDatabase h2(String tag) {
        return new ProxiedDatabase(Dialect.H2, tag);
    }

    @Override
    public void beforeAll(ExtensionContext context) throws Exception {
        if (depth++ > 0) {
            return;
        }
        prefix = TestDatabases.prefix(tag);
        port = switch (dialect) {
            case POSTGRESQL -> TestDatabases.PG_PORT;
            case MYSQL -> TestDatabases.MARIADB_PORT;
            case H2 -> {
                h2 = TestDatabases.startH2Server();
                database = prefix + "db";
                yield h2.getPort();
            }
        };
        TestDatabases.createTables(url(port), dialect, prefix);
        proxy = TcpProxy.start("127.0.0.1", port);
    }

    @Override
    public void afterAll(ExtensionContext context) throws Exception {
        if (--depth > 0) {
            return;
        }
        proxy.close();
        TestDatabases.dropTables(url(port), prefix);
        if (h2 != null) {
            h2.stop();
        }
    }

    Dialect dialect() {
        return dialect;
    }

    String prefix() {
        return prefix;
    }

    private String url(int port) {
        return switch (dialect) {
            case POSTGRESQL -> TestDatabases.postgres(port);
            case MYSQL -> TestDatabases.mariadb(port);
            case H2 -> TestDatabases.h2(port, database);
        };
    }

    /** The JDBC URL through the proxy, without dlock parameters. */
    String viaProxy() {
        return url(proxy.port());
    }

    /** A dlock URI through the proxy, on this class's tables. */
    String clientUri() {
        return viaProxy() + (dialect == Dialect.H2 ? ";" : "&") + "dlock.tablePrefix=" + prefix;
    }

    /** Makes the database unreachable (black hole) until {@link #restoreAndWait}. */
    void cut() {
        proxy.cut();
    }

    /** Forwards again and waits until the database answers through the proxy. */
    void restoreAndWait() throws Exception {
        proxy.restore();
        long deadline = System.nanoTime() + Duration.ofSeconds(30).toNanos();
        while (true) {
            try (Connection c = DriverManager.getConnection(viaProxy())) {
                if (c.isValid(2)) {
                    return;
                }
            } catch (SQLException e) {
                if (System.nanoTime() - deadline > 0) {
                    throw new AssertionError("the database did not answer through the proxy again", e);
                }
            }
            Thread.sleep(100);
        }
    }
}
