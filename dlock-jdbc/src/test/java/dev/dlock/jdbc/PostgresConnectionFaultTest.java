package dev.dlock.jdbc;

import java.sql.Connection;
import java.sql.PreparedStatement;
import java.sql.SQLException;

class PostgresConnectionFaultTest extends ConnectionFaultTest {
    private static final String DIRECT = TestDatabases.postgres(TestDatabases.PG_PORT);

    @Override
    String clientUrl() {
        return DIRECT + "&ApplicationName=" + prefix;
    }

    @Override
    void prepare() {}

    @Override
    void cleanUp() throws SQLException {
        TestDatabases.dropTables(DIRECT, prefix);
    }

    @Override
    int killConnections() throws SQLException {
        try (Connection c = TestDatabases.connect(DIRECT);
                PreparedStatement ps = c.prepareStatement("SELECT pg_terminate_backend(pid) FROM"
                        + " pg_stat_activity WHERE application_name = ? AND pid <> pg_backend_pid()")) {
            ps.setString(1, prefix);
            return count(ps);
        }
    }
}
