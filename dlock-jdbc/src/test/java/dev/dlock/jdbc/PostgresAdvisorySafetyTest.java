package dev.dlock.jdbc;

import dev.dlock.spi.LockKey;
import java.sql.Connection;
import java.sql.ResultSet;
import java.sql.SQLException;
import java.sql.Statement;

class PostgresAdvisorySafetyTest extends AdvisorySafetyTest {
    @Override
    String url() {
        return TestDatabases.postgres(TestDatabases.PG_PORT);
    }

    @Override
    int advisoryLocksHeld(Connection pooled, LockKey key) throws SQLException {
        try (Statement st = pooled.createStatement();
                ResultSet rs = st.executeQuery(
                        "SELECT count(*) FROM pg_locks WHERE locktype = 'advisory' AND pid = pg_backend_pid()")) {
            rs.next();
            return rs.getInt(1);
        }
    }
}
