package dev.dlock.jdbc;

import static dev.dlock.jdbc.Tables.bindKey;
import static dev.dlock.jdbc.Tables.placeholders;

import dev.dlock.spi.AcquireRequest;
import dev.dlock.spi.AcquireResult;
import dev.dlock.spi.LockKey;
import java.sql.Connection;
import java.sql.PreparedStatement;
import java.sql.ResultSet;
import java.sql.SQLException;
import java.util.ArrayList;
import java.util.Collection;
import java.util.HashSet;
import java.util.List;
import java.util.Set;

/**
 * The statements that differ between databases, in the portable form every supported database runs (H2
 * uses exactly these). {@link PostgresSql} and {@link MysqlSql} override the ones their database can do
 * in fewer round trips or with a wake-up; {@link Dialect#sql} picks the class.
 *
 * <p>Design: each method is one step of the lease table ({@link LeaseTable}) whose SQL is not the same
 * everywhere. A step that only some databases can do in one statement (the exclusive acquire, the next
 * fencing token) takes the portable way as an argument, a transaction the caller composes from the
 * shared grant logic ({@link Grants}); the portable class simply runs it. So the table code never asks
 * which database it talks to.
 *
 * <p>Concurrency: stateless apart from the SQL text; safe for many threads with one connection each.
 * Failure modes: every method throws {@link SQLException} as the driver reports it.
 */
class PortableSql {
    private static final String SELECT_ROW_FOR_UPDATE =
            "SELECT token, owner, expires_at, {NOW}, {NOW_MICROS} FROM {L} WHERE ns = ? AND kind = ? AND name_key = ?"
                    + " FOR UPDATE";
    private static final String INSERT_ROW =
            "INSERT INTO {L} (ns, kind, name_key, name, token, owner, expires_at) VALUES (?, ?, ?, ?, 0, NULL, 0)";
    /** Extends inline (exclusive) holds of the listed owners. */
    private static final String RENEW_INLINE =
            "UPDATE {L} SET expires_at = {NOW} + ? WHERE owner IN (%s) AND expires_at > {NOW}";

    private static final String RENEW_ROWS =
            "UPDATE {E} SET expires_at = {NOW} + ? WHERE owner IN (%s) AND held = 1 AND expires_at > {NOW}";
    private static final String LIVE_INLINE = "SELECT owner FROM {L} WHERE owner IN (%s) AND expires_at > {NOW}";
    private static final String LIVE_ROWS =
            "SELECT owner FROM {E} WHERE owner IN (%s) AND held = 1 AND expires_at > {NOW}";

    /** The tables the statements run against. */
    final Tables tables;

    PortableSql(Tables tables) {
        this.tables = tables;
    }

    /** A prepared statement of a template ({@link Tables#sql}). */
    final PreparedStatement prepare(Connection c, String template) throws SQLException {
        return c.prepareStatement(tables.sql(template));
    }

    /**
     * One attempt at an exclusive lock; {@code inTransaction} is the portable way (a grant transaction),
     * run here as is.
     */
    AcquireResult acquireExclusive(
            Connection c, AcquireRequest request, Transactions.SqlWork<AcquireResult> inTransaction)
            throws SQLException {
        return inTransaction.run();
    }

    /** Increments and returns a resource's durable token; {@code inTransaction} is the portable way. */
    long nextToken(Connection c, LockKey key, Transactions.SqlWork<Long> inTransaction) throws SQLException {
        return inTransaction.run();
    }

    /**
     * Inside a grant transaction: the resource's row, created if missing, locked until the commit.
     * Portable: select it {@code FOR UPDATE}; if it is missing, insert it (a concurrent insert of the same
     * row is a duplicate key, ignored) and select it again, now waiting for the other transaction.
     */
    ResourceRow lockRow(Connection c, LockKey key) throws SQLException {
        ResourceRow row = selectRowForUpdate(c, key);
        if (row != null) {
            return row;
        }
        try (PreparedStatement ps = prepare(c, INSERT_ROW)) {
            bindKey(ps, 1, key);
            ps.setString(4, key.name());
            ps.executeUpdate();
        } catch (SQLException e) {
            if (!isDuplicateKey(e)) {
                throw e;
            }
            // Another transaction created the row first; it is locked below once that one commits.
        }
        row = selectRowForUpdate(c, key);
        if (row == null) {
            throw new SQLException("the lock row of '" + key.name() + "' vanished while it was being created");
        }
        return row;
    }

    private ResourceRow selectRowForUpdate(Connection c, LockKey key) throws SQLException {
        try (PreparedStatement ps = prepare(c, SELECT_ROW_FOR_UPDATE)) {
            bindKey(ps, 1, key);
            try (ResultSet rs = ps.executeQuery()) {
                return rs.next() ? resourceRow(rs) : null;
            }
        }
    }

    /** A row read as token, owner, expires_at, {@code {NOW}}, {@code {NOW_MICROS}}. */
    static ResourceRow resourceRow(ResultSet rs) throws SQLException {
        return new ResourceRow(rs.getLong(1), rs.getString(2), rs.getLong(3), rs.getLong(4), rs.getLong(5));
    }

    static boolean isDuplicateKey(SQLException e) {
        String state = e.getSQLState();
        return state != null && state.startsWith("23") || e.getErrorCode() == 1062;
    }

    /**
     * Runs {@code change}, a statement that removes {@code owner}'s hold or queue entry (parameters: the
     * key, then the owner), and wakes the resource's waiters if the database can; true when a row changed.
     * Portable: no wake-up (waiters poll at their retry hints).
     */
    boolean changeAndWake(Connection c, LockKey key, String owner, String change) throws SQLException {
        try (PreparedStatement ps = prepare(c, change)) {
            bindKey(ps, 1, key);
            ps.setString(4, owner);
            return ps.executeUpdate() > 0;
        }
    }

    /** Wakes every waiter of a resource (after a forced release, a hold cut short). Portable: nothing to send. */
    void wakeAll(Connection c, LockKey key) throws SQLException {}

    /**
     * What one renewal statement did: the owners whose holds it extended, and among them those whose hold
     * now ends earlier than before (a lease cut short by {@code extend}), whose waiters {@link LeaseTable}
     * wakes, as a release would.
     */
    record Renewed(Set<String> owners, Set<String> cutShort) {}

    /**
     * Renews two chunks of owners with one lease time, inline (exclusive) holds and entry rows. Portable:
     * per table an UPDATE, and only when it matched fewer rows than owners, a SELECT of the live ones; no
     * hold is reported cut short (waiters poll at their retry hints, a cut hold's waiters too).
     */
    Renewed renewChunk(Connection c, long lease, List<String> inline, List<String> rows) throws SQLException {
        Set<String> renewed = new HashSet<>();
        renewed.addAll(renewOneTable(c, lease, inline, RENEW_INLINE, LIVE_INLINE));
        renewed.addAll(renewOneTable(c, lease, rows, RENEW_ROWS, LIVE_ROWS));
        return new Renewed(renewed, Set.of());
    }

    /**
     * Whether {@code owner} holds a lease now, read without changing it: its row in the lock table for an
     * exclusive hold ({@code inline}), else its held entry.
     */
    final boolean holds(Connection c, boolean inline, String owner) throws SQLException {
        try (PreparedStatement ps = prepare(c, (inline ? LIVE_INLINE : LIVE_ROWS).formatted("?"))) {
            ps.setString(1, owner);
            try (ResultSet rs = ps.executeQuery()) {
                return rs.next();
            }
        }
    }

    private Collection<String> renewOneTable(Connection c, long lease, List<String> owners, String update, String live)
            throws SQLException {
        if (owners.isEmpty()) {
            return List.of();
        }
        int matched;
        try (PreparedStatement ps = prepare(c, update.formatted(placeholders(owners.size())))) {
            ps.setLong(1, lease);
            for (int i = 0; i < owners.size(); i++) {
                ps.setString(i + 2, owners.get(i));
            }
            matched = ps.executeUpdate();
        }
        if (matched >= owners.size()) {
            return owners;
        }
        // Owner ids are unique per acquisition, so a live row now means the update above extended it.
        List<String> renewed = new ArrayList<>();
        try (PreparedStatement ps = prepare(c, live.formatted(placeholders(owners.size())))) {
            for (int i = 0; i < owners.size(); i++) {
                ps.setString(i + 1, owners.get(i));
            }
            try (ResultSet rs = ps.executeQuery()) {
                while (rs.next()) {
                    renewed.add(rs.getString(1));
                }
            }
        }
        return renewed;
    }

    /**
     * Sets a grant transaction's server-side limits from the operation timeout (see {@link Transactions});
     * true when they are session settings that {@link #restoreSessionLimits} must restore after the
     * commit. Portable (H2): none; H2 keeps its own {@code LOCK_TIMEOUT}.
     */
    boolean limitTransaction(Connection c, long timeoutMillis) throws SQLException {
        return false;
    }

    /** Restores the session settings {@link #limitTransaction} changed. */
    void restoreSessionLimits(Connection c) throws SQLException {}

    /** The answer of {@link #tryAdvisoryLock}: whether the lock was taken, and by which session. */
    record AdvisoryTry(boolean taken, long sessionId) {}

    /** Whether the database has session-level advisory locks (the advisory flavour). Portable: no. */
    boolean hasAdvisoryLocks() {
        return false;
    }

    /** A resource's advisory lock id, from the hash of prefix, namespace and name. */
    String advisoryLockId(LockKey key) {
        throw new UnsupportedOperationException("the advisory flavour needs PostgreSQL or MySQL/MariaDB");
    }

    /** One round trip: tries the advisory lock without waiting and reads the session's id. */
    AdvisoryTry tryAdvisoryLock(Connection c, String id) throws SQLException {
        throw new UnsupportedOperationException("the advisory flavour needs PostgreSQL or MySQL/MariaDB");
    }

    /** Releases an advisory lock, waking waiters where the database can; true when this session held it. */
    boolean releaseAdvisoryLock(Connection c, String id, LockKey key) throws SQLException {
        throw new UnsupportedOperationException("the advisory flavour needs PostgreSQL or MySQL/MariaDB");
    }

    /** The statement that releases every advisory lock of the session. */
    String releaseAllAdvisoryLocks() {
        throw new UnsupportedOperationException("the advisory flavour needs PostgreSQL or MySQL/MariaDB");
    }

    /** The hash an advisory lock id is made from. */
    final byte[] advisoryHash(LockKey key) {
        return Tables.sha256(tables.prefix() + '\n' + key.namespace() + '\n' + key.name());
    }
}
