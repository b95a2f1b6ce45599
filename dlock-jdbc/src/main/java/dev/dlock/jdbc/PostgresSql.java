package dev.dlock.jdbc;

import static dev.dlock.jdbc.Tables.bindKey;
import static dev.dlock.jdbc.Tables.placeholders;

import dev.dlock.spi.AcquireRequest;
import dev.dlock.spi.AcquireResult;
import dev.dlock.spi.LockKey;
import dev.dlock.spi.Mode;
import java.nio.ByteBuffer;
import java.sql.Connection;
import java.sql.PreparedStatement;
import java.sql.ResultSet;
import java.sql.SQLException;
import java.util.ArrayList;
import java.util.HashSet;
import java.util.List;
import java.util.Set;

/**
 * PostgreSQL's fast paths and wake-ups: every step that the portable SQL ({@link PortableSql}) needs
 * several round trips for is one statement here, and every change that frees a resource notifies its
 * waiters in the same statement.
 *
 * <p>Design: {@code INSERT ... ON CONFLICT ... DO UPDATE ... RETURNING} takes or creates a row and
 * answers in one round trip (the exclusive acquire, which also returns the holder's time left when busy;
 * locking the resource row of a grant transaction; the advisory flavour's next token). Data-modifying
 * {@code WITH} queries put a change and its {@code pg_notify} in one statement, so the notification goes
 * out exactly when the change commits, and both tables' renewals in one statement. A fair lock's release
 * names the next queued owner in the payload, so only that waiter wakes ({@link PgNotifier}). Releases
 * and cancelled waits commit asynchronously (for their own transaction only): a grant must survive a
 * crash, the end of a hold need not.
 *
 * <p>Concurrency and failure modes as {@link PortableSql}. Entry rows are locked in id order by renewals
 * too ({@code ORDER BY id FOR UPDATE}), the order grants lock them in, so renewals never deadlock grants.
 */
final class PostgresSql extends PortableSql {
    private static final String ACQUIRE_EXCLUSIVE = "WITH up AS ("
            + " INSERT INTO {L} AS l (ns, kind, name_key, name, token, owner, expires_at)"
            + " VALUES (?, ?, ?, ?, {FLOOR}, ?, {NOW} + ?)"
            + " ON CONFLICT (ns, kind, name_key) DO UPDATE"
            + " SET token = GREATEST(l.token + {BLOCK}, {FLOOR}), owner = excluded.owner, expires_at = excluded.expires_at"
            + " WHERE l.expires_at <= {NOW} OR l.owner = excluded.owner"
            + " RETURNING l.token)"
            + " SELECT (SELECT token FROM up),"
            + " (SELECT GREATEST(l.expires_at - {NOW}, 0) FROM {L} l WHERE l.ns = ? AND l.kind = ? AND l.name_key = ?)";
    private static final String LOCK_ROW =
            "INSERT INTO {L} AS l (ns, kind, name_key, name, token, owner, expires_at) VALUES (?, ?, ?, ?, 0, NULL, 0)"
                    + " ON CONFLICT (ns, kind, name_key) DO UPDATE SET token = l.token"
                    + " RETURNING l.token, l.owner, l.expires_at, {NOW}, {NOW_MICROS}";
    private static final String NEXT_TOKEN = "INSERT INTO {L} AS l (ns, kind, name_key, name, token, owner, expires_at)"
            + " VALUES (?, ?, ?, ?, {FLOOR}, NULL, 0) ON CONFLICT (ns, kind, name_key)"
            + " DO UPDATE SET token = GREATEST(l.token + {BLOCK}, {FLOOR})"
            + " RETURNING l.token";
    // pg_notify runs once per changed row; the notification is delivered when the transaction commits.
    // A change that ends a hold or a queue entry commits without waiting for the log to reach the disk: lost
    // in a crash, the hold or entry comes back and lasts until its expiry (liveness, never safety), and any
    // grant committed after it is flushed with it, since the log is flushed in order.
    private static final String ASYNC_COMMIT = ", set_config('synchronous_commit', 'off', true)";
    private static final String NOTIFY_ANY = " SELECT pg_notify(?, '')" + ASYNC_COMMIT + " FROM changed";
    private static final String NOTIFY_HEAD = " SELECT pg_notify(?, COALESCE((SELECT q.owner FROM {E} q"
            + " WHERE q.ns = ? AND q.kind = ? AND q.name_key = ? AND q.held = 0 AND q.expires_at > {NOW}"
            + " AND q.owner <> ? ORDER BY q.id LIMIT 1), ''))" + ASYNC_COMMIT + " FROM changed";
    // Renewals return each renewed owner and whether its hold now ends earlier than before: a subquery sees
    // the row as it was before its own statement changed it.
    private static final String RENEW_INLINE = "UPDATE {L} u SET expires_at = {NOW} + ?"
            + " WHERE u.owner IN (%s) AND u.expires_at > {NOW}"
            + " RETURNING u.owner, u.expires_at < (SELECT o.expires_at FROM {L} o"
            + " WHERE o.ns = u.ns AND o.kind = u.kind AND o.name_key = u.name_key)";
    private static final String RENEW_ROWS = "UPDATE {E} u SET expires_at = {NOW} + ? WHERE u.id IN"
            + " (SELECT id FROM {E} WHERE owner IN (%s) AND held = 1 ORDER BY id FOR UPDATE) AND u.expires_at > {NOW}"
            + " RETURNING u.owner, u.expires_at < (SELECT o.expires_at FROM {E} o WHERE o.id = u.id)";

    PostgresSql(Tables tables) {
        super(tables);
    }

    /** One statement; busy answers carry the holder's time left. */
    @Override
    AcquireResult acquireExclusive(Connection c, AcquireRequest request, Transactions.SqlWork<AcquireResult> portable)
            throws SQLException {
        LockKey key = request.key();
        try (PreparedStatement ps = prepare(c, ACQUIRE_EXCLUSIVE)) {
            bindKey(ps, 1, key);
            ps.setString(4, key.name());
            ps.setString(5, request.owner());
            ps.setLong(6, request.leaseMillis());
            bindKey(ps, 7, key);
            try (ResultSet rs = ps.executeQuery()) {
                rs.next();
                long token = rs.getLong(1);
                if (!rs.wasNull()) {
                    return AcquireResult.granted(token);
                }
                long remaining = rs.getLong(2);
                return AcquireResult.busy(rs.wasNull() ? -1 : remaining);
            }
        }
    }

    @Override
    long nextToken(Connection c, LockKey key, Transactions.SqlWork<Long> portable) throws SQLException {
        try (PreparedStatement ps = prepare(c, NEXT_TOKEN)) {
            bindKey(ps, 1, key);
            ps.setString(4, key.name());
            try (ResultSet rs = ps.executeQuery()) {
                rs.next();
                return rs.getLong(1);
            }
        }
    }

    /** One upsert that creates or locks the row and returns it. */
    @Override
    ResourceRow lockRow(Connection c, LockKey key) throws SQLException {
        try (PreparedStatement ps = prepare(c, LOCK_ROW)) {
            bindKey(ps, 1, key);
            ps.setString(4, key.name());
            try (ResultSet rs = ps.executeQuery()) {
                rs.next();
                return resourceRow(rs);
            }
        }
    }

    /** The change and its notification in one statement; a fair lock's names the next owner. */
    @Override
    boolean changeAndWake(Connection c, LockKey key, String owner, String change) throws SQLException {
        boolean fair = key.mode() == Mode.FAIR;
        String text = "WITH changed AS (" + change + " RETURNING 1)" + (fair ? NOTIFY_HEAD : NOTIFY_ANY);
        try (PreparedStatement ps = prepare(c, text)) {
            bindKey(ps, 1, key);
            ps.setString(4, owner);
            ps.setString(5, tables.channel(key));
            if (fair) {
                bindKey(ps, 6, key);
                ps.setString(9, owner);
            }
            try (ResultSet rs = ps.executeQuery()) {
                return rs.next();
            }
        }
    }

    @Override
    void wakeAll(Connection c, LockKey key) throws SQLException {
        try (PreparedStatement ps = c.prepareStatement("SELECT pg_notify(?, '')")) {
            ps.setString(1, tables.channel(key));
            ps.executeQuery().close();
        }
    }

    /** Both tables in one statement returning the renewed owners, each marked if its hold was cut short. */
    @Override
    Renewed renewChunk(Connection c, long lease, List<String> inline, List<String> rows) throws SQLException {
        List<String> parts = new ArrayList<>();
        List<String> selects = new ArrayList<>();
        if (!inline.isEmpty()) {
            parts.add("a AS (" + RENEW_INLINE.formatted(placeholders(inline.size())) + ")");
            selects.add("SELECT * FROM a");
        }
        if (!rows.isEmpty()) {
            parts.add("b AS (" + RENEW_ROWS.formatted(placeholders(rows.size())) + ")");
            selects.add("SELECT * FROM b");
        }
        String text = "WITH " + String.join(", ", parts) + " " + String.join(" UNION ALL ", selects);
        Set<String> renewed = new HashSet<>();
        Set<String> cutShort = new HashSet<>();
        try (PreparedStatement ps = prepare(c, text)) {
            int i = 1;
            for (List<String> owners : List.of(inline, rows)) {
                if (!owners.isEmpty()) {
                    ps.setLong(i++, lease);
                    for (String o : owners) {
                        ps.setString(i++, o);
                    }
                }
            }
            try (ResultSet rs = ps.executeQuery()) {
                while (rs.next()) {
                    renewed.add(rs.getString(1));
                    if (rs.getBoolean(2)) {
                        cutShort.add(rs.getString(1));
                    }
                }
            }
        }
        return new Renewed(renewed, cutShort);
    }

    /** {@code SET LOCAL} both limits in one statement; they end with the transaction. */
    @Override
    boolean limitTransaction(Connection c, long timeoutMillis) throws SQLException {
        try (PreparedStatement ps = c.prepareStatement("SELECT set_config('lock_timeout', ?, true),"
                + " set_config('idle_in_transaction_session_timeout', ?, true)")) {
            ps.setString(1, Long.toString(timeoutMillis));
            ps.setString(2, Long.toString(timeoutMillis));
            ps.executeQuery().close();
        }
        return false;
    }

    @Override
    boolean hasAdvisoryLocks() {
        return true;
    }

    /** A 64-bit key: the first 8 bytes of the hash. */
    @Override
    String advisoryLockId(LockKey key) {
        return Long.toString(ByteBuffer.wrap(advisoryHash(key)).getLong());
    }

    @Override
    AdvisoryTry tryAdvisoryLock(Connection c, String id) throws SQLException {
        try (PreparedStatement ps = c.prepareStatement(
                "SELECT pg_try_advisory_lock(?), " + tables.dialect().sessionIdSql())) {
            ps.setLong(1, Long.parseLong(id));
            try (ResultSet rs = ps.executeQuery()) {
                rs.next();
                return new AdvisoryTry(rs.getBoolean(1), rs.getLong(2));
            }
        }
    }

    /** The unlock and the waiters' notification in one statement. */
    @Override
    boolean releaseAdvisoryLock(Connection c, String id, LockKey key) throws SQLException {
        try (PreparedStatement ps = c.prepareStatement("SELECT pg_advisory_unlock(?), pg_notify(?, '')")) {
            ps.setLong(1, Long.parseLong(id));
            ps.setString(2, tables.channel(key));
            try (ResultSet rs = ps.executeQuery()) {
                rs.next();
                return rs.getBoolean(1);
            }
        }
    }

    @Override
    String releaseAllAdvisoryLocks() {
        return "SELECT pg_advisory_unlock_all()";
    }
}
