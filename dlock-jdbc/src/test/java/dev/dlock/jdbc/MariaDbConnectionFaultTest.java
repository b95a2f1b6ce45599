package dev.dlock.jdbc;

import java.sql.Connection;
import java.sql.PreparedStatement;
import java.sql.ResultSet;
import java.sql.SQLException;
import java.sql.Statement;
import java.util.ArrayList;
import java.util.List;

class MariaDbConnectionFaultTest extends ConnectionFaultTest {
    private static final String DIRECT = TestDatabases.mariadb(TestDatabases.MARIADB_PORT);

    private String database() {
        return prefix + "db";
    }

    @Override
    String clientUrl() {
        return "jdbc:mariadb://127.0.0.1:" + TestDatabases.MARIADB_PORT + "/" + database() + "?user=root";
    }

    @Override
    void prepare() throws SQLException {
        try (Connection c = TestDatabases.connect(DIRECT);
                Statement st = c.createStatement()) {
            st.execute("CREATE DATABASE " + database());
        }
    }

    @Override
    void cleanUp() throws SQLException {
        try (Connection c = TestDatabases.connect(DIRECT);
                Statement st = c.createStatement()) {
            st.execute("DROP DATABASE IF EXISTS " + database());
        }
    }

    @Override
    int killConnections() throws SQLException {
        List<Long> ids = new ArrayList<>();
        try (Connection c = TestDatabases.connect(DIRECT)) {
            try (PreparedStatement ps =
                    c.prepareStatement("SELECT id FROM information_schema.processlist WHERE db = ?")) {
                ps.setString(1, database());
                try (ResultSet rs = ps.executeQuery()) {
                    while (rs.next()) {
                        ids.add(rs.getLong(1));
                    }
                }
            }
            for (long id : ids) {
                try (Statement st = c.createStatement()) {
                    st.execute("KILL CONNECTION " + id);
                } catch (SQLException gone) {
                    // Closed meanwhile.
                }
            }
        }
        return ids.size();
    }
}
