package dev.dlock.jdbc;

import dev.dlock.spi.LockKey;
import java.sql.Connection;
import java.sql.PreparedStatement;
import java.sql.ResultSet;
import java.sql.SQLException;
import java.util.HexFormat;

class MariaDbAdvisorySafetyTest extends AdvisorySafetyTest {
    @Override
    String url() {
        return TestDatabases.mariadb(TestDatabases.MARIADB_PORT);
    }

    @Override
    int advisoryLocksHeld(Connection pooled, LockKey key) throws SQLException {
        // The name AdvisoryLocks gives the lock: a hash of prefix, namespace and name.
        String name = "dlock:"
                + HexFormat.of()
                        .formatHex(Tables.sha256(prefix + '\n' + key.namespace() + '\n' + key.name()))
                        .substring(0, 58);
        try (PreparedStatement ps = pooled.prepareStatement("SELECT IS_USED_LOCK(?) = CONNECTION_ID()")) {
            ps.setString(1, name);
            try (ResultSet rs = ps.executeQuery()) {
                rs.next();
                return rs.getInt(1);
            }
        }
    }
}
