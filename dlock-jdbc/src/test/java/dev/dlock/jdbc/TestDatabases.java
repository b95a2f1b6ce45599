package dev.dlock.jdbc;

import java.sql.Connection;
import java.sql.DriverManager;
import java.sql.PreparedStatement;
import java.sql.SQLException;
import java.sql.Statement;
import java.util.concurrent.ThreadLocalRandom;
import org.h2.tools.Server;

/**
 * The databases the tests use: the machine's PostgreSQL and MariaDB (scripts/test.sh installs and starts
 * them) and H2 in this JVM. Every test class works in tables of its own random prefix and drops them at
 * the end, so classes and other people's tests on the same databases do not collide.
 */
final class TestDatabases {
    static final String PG_HOST = "127.0.0.1";
    static final int PG_PORT = 5432;
    static final int MARIADB_PORT = 3306;

    private TestDatabases() {}

    static String postgres(int port) {
        return "jdbc:postgresql://127.0.0.1:" + port + "/test?user=postgres";
    }

    static String mariadb(int port) {
        return "jdbc:mariadb://127.0.0.1:" + port + "/test?user=root";
    }

    /** A fresh prefix such as {@code t_contract_3fa9c1_}. */
    static String prefix(String tag) {
        return "t_" + tag + "_"
                + Integer.toHexString(ThreadLocalRandom.current().nextInt(0x100000, 0xffffff)) + "_";
    }

    /** Creates the lease tables with the shipped DDL. */
    static void createTables(String url, Dialect dialect, String prefix) throws SQLException {
        try (Connection c = connect(url)) {
            new LeaseTable(dialect, prefix, 5_000).createTablesIfMissing(c);
        }
    }

    static void dropTables(String url, String prefix) throws SQLException {
        try (Connection c = connect(url);
                Statement st = c.createStatement()) {
            st.execute("DROP TABLE IF EXISTS " + prefix + "entries");
            st.execute("DROP TABLE IF EXISTS " + prefix + "locks");
        }
    }

    /**
     * Deletes the rows keeping the last tokens of a name (every kind), as a careless clean-up would, on a
     * connection the caller opened beforehand, so the deletion follows the last grant as closely as the
     * database allows.
     */
    static int deleteLockRows(Connection c, String prefix, String name) throws SQLException {
        try (PreparedStatement ps = c.prepareStatement("DELETE FROM " + prefix + "locks WHERE name = ?")) {
            ps.setString(1, name);
            return ps.executeUpdate();
        }
    }

    static Connection connect(String url) throws SQLException {
        try {
            return DriverManager.getConnection(url);
        } catch (SQLException e) {
            throw new SQLException(
                    "cannot reach " + url + " - run scripts/test.sh, which installs and starts PostgreSQL and"
                            + " MariaDB with a 'test' database: " + e.getMessage(),
                    e);
        }
    }

    /** An H2 TCP server in this JVM on a free port; in-memory databases stay while the JVM lives. */
    static Server startH2Server() throws SQLException {
        return Server.createTcpServer("-tcpPort", "0", "-ifNotExists").start();
    }

    static String h2(int port, String database) {
        return "jdbc:h2:tcp://127.0.0.1:" + port + "/mem:" + database + ";DB_CLOSE_DELAY=-1";
    }
}
