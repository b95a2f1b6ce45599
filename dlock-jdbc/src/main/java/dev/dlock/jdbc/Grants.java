package dev.dlock.jdbc;

import static dev.dlock.jdbc.Tables.bindKey;

import dev.dlock.spi.AcquireRequest;
import dev.dlock.spi.AcquireResult;
import dev.dlock.spi.GrantRules;
import dev.dlock.spi.LockKey;
import dev.dlock.spi.Mode;
import java.sql.Connection;
import java.sql.PreparedStatement;
import java.sql.ResultSet;
import java.sql.SQLException;
import java.util.ArrayList;
import java.util.List;
import java.util.Locale;

/**
 * Grant transactions: the portable way to grant any kind of lock, and the only way for fair locks,
 * read-write locks and semaphores, whose holders and queue are rows of the entries table.
 *
 * <p>Design: one short transaction per attempt, run by the caller inside {@link
 * Transactions#inTransaction}: lock the resource's row ({@link PortableSql#lockRow}, which serialises
 * every grant of that resource), read its entries {@code FOR UPDATE} in id order, decide in Java by the
 * rules of {@code LockBackend}, write, commit. The fencing token is incremented from the resource row in
 * that transaction, so tokens keep increasing across expiries and forced releases. An attempt whose
 * earlier grant committed but whose answer was lost finds its own held entry and is granted again with
 * a new token. Every time compared or stored is the database's clock. Tokens follow {@link
 * Tables#nextToken} (a block per grant, at least the database's time in microseconds, {@link
 * ResourceRow#nowMicros}, read by the statement that returns the locked row: a row deleted meanwhile is
 * not returned and is created and read by a later statement, or on PostgreSQL created by the same upsert,
 * whose {@code RETURNING} reads the clock afterwards; so the floor is read after the deletion).
 *
 * <p>Concurrency: stateless; lock order is the resource row, then entry rows in id order, so grants,
 * releases and renewals do not deadlock one another. Failure modes: {@link SQLException} as the driver
 * reports it; the enclosing transaction rolls back.
 */
final class Grants {
    private record Entry(String owner, String mode, boolean held, long token, long expiresAt) {}

    private static final String SELECT_ENTRIES =
            "SELECT owner, mode, held, token, expires_at FROM {E} WHERE ns = ? AND kind = ? AND name_key = ?"
                    + " ORDER BY id FOR UPDATE";
    private static final String DELETE_EXPIRED =
            "DELETE FROM {E} WHERE ns = ? AND kind = ? AND name_key = ? AND expires_at <= ?";
    private static final String SET_TOKEN = "UPDATE {L} SET token = ? WHERE ns = ? AND kind = ? AND name_key = ?";
    private static final String SET_EXCLUSIVE =
            "UPDATE {L} SET token = ?, owner = ?, expires_at = ? WHERE ns = ? AND kind = ? AND name_key = ?";
    private static final String UPDATE_ENTRY = "UPDATE {E} SET mode = ?, held = ?, token = ?, expires_at = ?"
            + " WHERE ns = ? AND kind = ? AND name_key = ? AND owner = ?";
    private static final String INSERT_ENTRY =
            "INSERT INTO {E} (ns, kind, name_key, owner, mode, held, token, expires_at) VALUES (?, ?, ?, ?, ?, ?, ?, ?)";

    private final PortableSql sql;

    Grants(PortableSql sql) {
        this.sql = sql;
    }

    /**
     * One attempt, inside a transaction. Answers granted with the token, or busy with the time until the
     * earliest blocking hold or queue entry runs out by the database clock (-1 when unknown).
     */
    AcquireResult acquire(Connection c, AcquireRequest request) throws SQLException {
        ResourceRow row = sql.lockRow(c, request.key());
        return request.key().mode() == Mode.EXCLUSIVE ? acquireInline(c, request, row) : acquireEntry(c, request, row);
    }

    /** Exclusive: the holder is kept inline in the resource row. */
    private AcquireResult acquireInline(Connection c, AcquireRequest request, ResourceRow row) throws SQLException {
        long now = row.now();
        if (row.expiresAt() > now && !request.owner().equals(row.owner())) {
            return AcquireResult.busy(row.expiresAt() - now);
        }
        long token = Tables.nextToken(row.token(), row.nowMicros());
        try (PreparedStatement ps = sql.prepare(c, SET_EXCLUSIVE)) {
            ps.setLong(1, token);
            ps.setString(2, request.owner());
            ps.setLong(3, now + request.leaseMillis());
            bindKey(ps, 4, request.key());
            ps.executeUpdate();
        }
        return AcquireResult.granted(token);
    }

    private AcquireResult acquireEntry(Connection c, AcquireRequest request, ResourceRow row) throws SQLException {
        LockKey key = request.key();
        String owner = request.owner();
        long now = row.now();
        List<Entry> holders = new ArrayList<>();
        List<Entry> queue = new ArrayList<>();
        boolean anyExpired = false;
        Entry own = null;
        try (PreparedStatement ps = sql.prepare(c, SELECT_ENTRIES)) {
            bindKey(ps, 1, key);
            try (ResultSet rs = ps.executeQuery()) {
                while (rs.next()) {
                    Entry e = new Entry(
                            rs.getString(1), rs.getString(2), rs.getInt(3) == 1, rs.getLong(4), rs.getLong(5));
                    if (e.expiresAt() <= now) {
                        anyExpired = true;
                        continue;
                    }
                    (e.held() ? holders : queue).add(e);
                    if (e.owner().equals(owner)) {
                        own = e;
                    }
                }
            }
        }
        boolean grant = own != null && own.held() // a retried attempt whose first grant committed
                || grantable(request, holders, queue);
        if (anyExpired) {
            try (PreparedStatement ps = sql.prepare(c, DELETE_EXPIRED)) {
                bindKey(ps, 1, key);
                ps.setLong(4, now);
                ps.executeUpdate();
            }
        }
        String mode = key.mode().name().toLowerCase(Locale.ROOT);
        if (grant) {
            long token = Tables.nextToken(row.token(), row.nowMicros());
            setToken(c, key, token);
            writeEntry(c, key, owner, mode, true, token, now + request.leaseMillis(), own != null);
            return AcquireResult.granted(token);
        }
        if (request.waiting() && key.mode().queuesWhileWaiting()) {
            writeEntry(c, key, owner, mode, false, 0, now + request.queueMillis(), own != null);
        }
        long earliest = Long.MAX_VALUE;
        for (Entry e : holders) {
            earliest = Math.min(earliest, e.expiresAt() - now);
        }
        for (Entry e : queue) {
            if (!e.owner().equals(owner)) {
                earliest = Math.min(earliest, e.expiresAt() - now);
            }
        }
        return AcquireResult.busy(earliest == Long.MAX_VALUE ? -1 : earliest);
    }

    /** {@link GrantRules} for the kinds kept in entry rows, given live holders and queue in order. */
    private static boolean grantable(AcquireRequest request, List<Entry> holders, List<Entry> queue) {
        String writer = holders.stream()
                .filter(h -> h.mode().equals("write"))
                .map(Entry::owner)
                .findFirst()
                .orElse(null);
        return GrantRules.mayGrant(
                request,
                holders.size(),
                writer,
                queue.isEmpty() ? null : queue.get(0).owner());
    }

    /** Inside a transaction: increments and returns a resource's token (the advisory flavour's portable way). */
    long nextToken(Connection c, LockKey key) throws SQLException {
        ResourceRow row = sql.lockRow(c, key);
        long token = Tables.nextToken(row.token(), row.nowMicros());
        setToken(c, key, token);
        return token;
    }

    private void setToken(Connection c, LockKey key, long token) throws SQLException {
        try (PreparedStatement ps = sql.prepare(c, SET_TOKEN)) {
            ps.setLong(1, token);
            bindKey(ps, 2, key);
            ps.executeUpdate();
        }
    }

    private void writeEntry(
            Connection c,
            LockKey key,
            String owner,
            String mode,
            boolean held,
            long token,
            long expiresAt,
            boolean exists)
            throws SQLException {
        if (exists) {
            try (PreparedStatement ps = sql.prepare(c, UPDATE_ENTRY)) {
                ps.setString(1, mode);
                ps.setInt(2, held ? 1 : 0);
                ps.setLong(3, token);
                ps.setLong(4, expiresAt);
                bindKey(ps, 5, key);
                ps.setString(8, owner);
                ps.executeUpdate();
            }
        } else {
            try (PreparedStatement ps = sql.prepare(c, INSERT_ENTRY)) {
                bindKey(ps, 1, key);
                ps.setString(4, owner);
                ps.setString(5, mode);
                ps.setInt(6, held ? 1 : 0);
                ps.setLong(7, token);
                ps.setLong(8, expiresAt);
                ps.executeUpdate();
            }
        }
    }
}
