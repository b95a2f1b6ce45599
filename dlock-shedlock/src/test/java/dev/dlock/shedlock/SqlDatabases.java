package dev.dlock.shedlock;

import java.sql.Connection;
import java.sql.DriverManager;
import java.sql.SQLException;
import java.sql.Statement;
import java.util.concurrent.ThreadLocalRandom;

/**
 * The machine's PostgreSQL and MariaDB, as the JDBC backend's tests use them (database {@code test} on the
 * default ports; scripts/test.sh installs and starts them). Each test class works in tables of its own
 * random prefix, created by the backend and dropped at the end.
 */
final class SqlDatabases {
    static final String POSTGRES = "jdbc:postgresql://127.0.0.1:5432/test?user=postgres";
    static final String MARIADB = "jdbc:mariadb://127.0.0.1:3306/test?user=root";

    private SqlDatabases() {}

    static String prefix() {
        return "t_shed_" + Integer.toHexString(ThreadLocalRandom.current().nextInt(0x100000, 0xffffff)) + "_";
    }

    /** A dlock URI for a database, creating the lease tables under a prefix. */
    static String uri(String url, String prefix) {
        return url + "&dlock.createTables=true&dlock.tablePrefix=" + prefix;
    }

    static void dropTables(String url, String prefix) throws SQLException {
        try (Connection c = DriverManager.getConnection(url);
                Statement st = c.createStatement()) {
            st.execute("DROP TABLE IF EXISTS " + prefix + "entries");
            st.execute("DROP TABLE IF EXISTS " + prefix + "locks");
        }
    }
}
