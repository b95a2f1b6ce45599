package dev.dlock.chaos;

import java.sql.Connection;
import java.sql.DriverManager;
import java.sql.PreparedStatement;
import java.sql.ResultSet;
import java.sql.SQLException;
import java.util.ArrayList;
import java.util.List;

/**
 * What the resource holds for one lock after a run: the final values and, in the database's order, the
 * accepted fenced writes and the unfenced sections' intervals.
 *
 * @param lock the lock name
 * @param fencedValue the final {@code f_value}
 * @param unfencedValue the final {@code u_value}
 * @param fenced accepted fenced writes in the order the database applied them
 * @param unfenced unfenced sections in the order they ended
 */
record Ledger(String lock, long fencedValue, long unfencedValue, List<FencedWrite> fenced, List<Interval> unfenced) {
    /**
     * An accepted fenced write.
     *
     * @param token its fencing token
     * @param section the section that made it
     */
    record FencedWrite(long token, String section) {}

    /**
     * An unfenced section by the database clock.
     *
     * @param section the section
     * @param enter entry time, microseconds
     * @param exit exit time, microseconds
     * @param readValue the value read on entry, -1 for semaphore sections (no increment)
     */
    record Interval(String section, long enter, long exit, long readValue) {}

    static Ledger read(String url, String store, String lock) throws SQLException {
        String key = store + "/" + lock;
        try (Connection c = DriverManager.getConnection(url)) {
            long f;
            long u;
            try (PreparedStatement ps =
                    c.prepareStatement("SELECT f_value, u_value FROM chaos_ledger WHERE lock_key = ?")) {
                ps.setString(1, key);
                try (ResultSet rs = ps.executeQuery()) {
                    rs.next();
                    f = rs.getLong(1);
                    u = rs.getLong(2);
                }
            }
            List<FencedWrite> fenced = new ArrayList<>();
            try (PreparedStatement ps =
                    c.prepareStatement("SELECT token, section FROM chaos_fenced_log WHERE lock_key = ? ORDER BY id")) {
                ps.setString(1, key);
                try (ResultSet rs = ps.executeQuery()) {
                    while (rs.next()) {
                        fenced.add(new FencedWrite(rs.getLong(1), rs.getString(2)));
                    }
                }
            }
            List<Interval> unfenced = new ArrayList<>();
            try (PreparedStatement ps =
                    c.prepareStatement("SELECT section, (extract(epoch FROM enter_at) * 1000000)::bigint,"
                            + " (extract(epoch FROM exit_at) * 1000000)::bigint, read_value FROM chaos_unfenced_log"
                            + " WHERE lock_key = ? ORDER BY id")) {
                ps.setString(1, key);
                try (ResultSet rs = ps.executeQuery()) {
                    while (rs.next()) {
                        unfenced.add(new Interval(rs.getString(1), rs.getLong(2), rs.getLong(3), rs.getLong(4)));
                    }
                }
            }
            return new Ledger(lock, f, u, fenced, unfenced);
        }
    }

    /** How many holders the lock admits: 2 for the semaphore, 1 otherwise. */
    int permits() {
        return lock.equals("sem") ? 2 : 1;
    }
}
