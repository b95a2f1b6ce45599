package dev.dlock.chaos;

import dev.dlock.jdbc.FencedUpdate;
import java.sql.Connection;
import java.sql.DriverManager;
import java.sql.PreparedStatement;
import java.sql.ResultSet;
import java.sql.SQLException;
import java.sql.Statement;
import java.sql.Timestamp;
import java.util.List;
import java.util.Map;

/**
 * The shared resource the clients protect with their locks: a ledger row per lock in a PostgreSQL
 * database of the suite's own, updated two ways in every critical section.
 *
 * <ul>
 *   <li><b>Fenced</b>: the section first claims the row with its fencing token ({@link FencedUpdate}: a
 *       token lower than the row's is refused), reads {@code f_value}, and writes {@code f_value + 1}
 *       again through {@link FencedUpdate}, logging the accepted write in {@code chaos_fenced_log} in the
 *       same transaction. With strictly increasing tokens no increment can be lost and no write older
 *       than an accepted one can land.
 *   <li><b>Unfenced</b> (the control group, trusting the lock alone): read {@code u_value} on entry, write
 *       {@code u_value + 1} on exit, and log the section's interval by the database clock in {@code
 *       chaos_unfenced_log}. Overlapping intervals and lost increments show what the lock alone allowed.
 * </ul>
 *
 * <p>Concurrency: one connection per client, auto-commit except for the fenced write's transaction; the
 * row lock taken by the fenced {@code UPDATE} orders the log as the database ordered the writes.
 */
final class Resource implements AutoCloseable {
    static final FencedUpdate LEDGER = FencedUpdate.of("chaos_ledger", "lock_key", "f_token");

    private final String url;
    private Connection connection;

    Resource(String url) {
        this.url = url;
    }

    /** Creates the tables if needed and one ledger row per lock key (reset to zero). */
    static void prepare(String url, List<String> lockKeys) throws SQLException {
        try (Connection c = DriverManager.getConnection(url);
                Statement st = c.createStatement()) {
            st.execute("CREATE TABLE IF NOT EXISTS chaos_ledger (lock_key TEXT PRIMARY KEY,"
                    + " f_value BIGINT NOT NULL DEFAULT 0, f_token BIGINT, f_claim TEXT,"
                    + " u_value BIGINT NOT NULL DEFAULT 0)");
            st.execute("CREATE TABLE IF NOT EXISTS chaos_fenced_log (id BIGSERIAL PRIMARY KEY, lock_key TEXT,"
                    + " token BIGINT, section TEXT, at TIMESTAMPTZ DEFAULT clock_timestamp())");
            st.execute("CREATE TABLE IF NOT EXISTS chaos_unfenced_log (id BIGSERIAL PRIMARY KEY,"
                    + " lock_key TEXT, section TEXT, enter_at TIMESTAMPTZ, exit_at TIMESTAMPTZ, read_value BIGINT)");
            for (String key : lockKeys) {
                try (PreparedStatement ps = c.prepareStatement("INSERT INTO chaos_ledger (lock_key) VALUES (?)"
                        + " ON CONFLICT (lock_key) DO UPDATE SET f_value = 0, f_token = NULL, f_claim = NULL,"
                        + " u_value = 0")) {
                    ps.setString(1, key);
                    ps.executeUpdate();
                }
                for (String table : List.of("chaos_fenced_log", "chaos_unfenced_log")) {
                    try (PreparedStatement ps = c.prepareStatement("DELETE FROM " + table + " WHERE lock_key = ?")) {
                        ps.setString(1, key);
                        ps.executeUpdate();
                    }
                }
            }
        }
    }

    private Connection connection() throws SQLException {
        if (connection == null || connection.isClosed()) {
            connection = DriverManager.getConnection(url);
        }
        return connection;
    }

    /** Drops the connection after an error, so the next call opens a new one. */
    void reset() {
        close();
    }

    /**
     * Entry to a section: the unfenced value and the database's time.
     *
     * @param value {@code u_value} as read
     * @param at the database clock at the read
     */
    record Entry(long value, Timestamp at) {}

    Entry enter(String key) throws SQLException {
        try (PreparedStatement ps = connection()
                .prepareStatement("SELECT u_value, clock_timestamp() FROM chaos_ledger WHERE lock_key = ?")) {
            ps.setString(1, key);
            try (ResultSet rs = ps.executeQuery()) {
                if (!rs.next()) {
                    throw new SQLException("no ledger row " + key);
                }
                return new Entry(rs.getLong(1), rs.getTimestamp(2));
            }
        }
    }

    /** Claims the row for a token; false when a higher token has claimed or written it. */
    boolean claim(String key, long token, String section) throws SQLException {
        return LEDGER.update(connection(), key, token, Map.of("f_claim", section));
    }

    long readFenced(String key) throws SQLException {
        try (PreparedStatement ps =
                connection().prepareStatement("SELECT f_value FROM chaos_ledger WHERE lock_key = ?")) {
            ps.setString(1, key);
            try (ResultSet rs = ps.executeQuery()) {
                rs.next();
                return rs.getLong(1);
            }
        }
    }

    /** Writes {@code value} fenced and logs it in one transaction; false when refused as stale. */
    boolean writeFenced(String key, long token, String section, long value) throws SQLException {
        Connection c = connection();
        c.setAutoCommit(false);
        try {
            boolean written = LEDGER.update(c, key, token, Map.of("f_value", value));
            if (written) {
                try (PreparedStatement ps = c.prepareStatement(
                        "INSERT INTO chaos_fenced_log (lock_key, token, section) VALUES (?, ?, ?)")) {
                    ps.setString(1, key);
                    ps.setLong(2, token);
                    ps.setString(3, section);
                    ps.executeUpdate();
                }
            }
            c.commit();
            return written;
        } catch (SQLException e) {
            c.rollback();
            throw e;
        } finally {
            c.setAutoCommit(true);
        }
    }

    /**
     * Exit of a section: writes {@code entry.value + 1} unfenced when {@code increment}, and logs the
     * interval by the database clock.
     */
    void exit(String key, String section, Entry entry, boolean increment) throws SQLException {
        String sql = increment
                ? "WITH u AS (UPDATE chaos_ledger SET u_value = ? WHERE lock_key = ? RETURNING clock_timestamp() AS t)"
                        + " INSERT INTO chaos_unfenced_log (lock_key, section, enter_at, exit_at, read_value)"
                        + " SELECT ?, ?, ?, t, ? FROM u"
                : "INSERT INTO chaos_unfenced_log (lock_key, section, enter_at, exit_at, read_value)"
                        + " VALUES (?, ?, ?, clock_timestamp(), ?)";
        try (PreparedStatement ps = connection().prepareStatement(sql)) {
            int i = 1;
            if (increment) {
                ps.setLong(i++, entry.value() + 1);
                ps.setString(i++, key);
            }
            ps.setString(i++, key);
            ps.setString(i++, section);
            ps.setTimestamp(i++, entry.at());
            ps.setLong(i, increment ? entry.value() : -1);
            ps.executeUpdate();
        }
    }

    @Override
    public void close() {
        try {
            if (connection != null) {
                connection.close();
            }
        } catch (SQLException ignored) {
            // the connection is gone either way
        }
        connection = null;
    }
}
