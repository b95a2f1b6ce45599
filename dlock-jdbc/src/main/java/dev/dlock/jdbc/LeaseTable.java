package dev.dlock.jdbc;

import static dev.dlock.jdbc.Tables.bindKey;

import dev.dlock.LockInfo;
import dev.dlock.spi.AcquireRequest;
import dev.dlock.spi.AcquireResult;
import dev.dlock.spi.LockKey;
import dev.dlock.spi.Mode;
import dev.dlock.spi.RenewRequest;
import java.sql.Connection;
import java.sql.PreparedStatement;
import java.sql.ResultSet;
import java.sql.SQLException;
import java.sql.Statement;
import java.util.ArrayList;
import java.util.HashMap;
import java.util.HashSet;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;
import java.util.Set;

/**
 * The lock primitives as SQL against the two lease tables, one call per primitive, synchronous, on a
 * connection the caller lends. The entry point of the backend's SQL; the work is split by concern.
 *
 * <p>Tables: {@code <prefix>locks} has one row per (namespace, kind, name) that is never deleted. It
 * keeps the last fencing token handed out and, for exclusive locks, the holder inline, so that an
 * exclusive acquire can be one statement. {@code <prefix>entries} has the holders and queue entries of
 * fair locks, read-write locks and semaphores. Names are bind parameters; the key column holds the
 * SHA-256 of the name (fixed width), the full name is kept beside it ({@link Tables}).
 *
 * <p>Design, where each concern lives: grant transactions and the grant rules in {@link Grants}; the
 * statements that differ per database (fast paths, wake-ups, renewal shape) in the dialect's {@link
 * PortableSql} subclass ({@link Dialect#sql}); {@code describe}/{@code list} in {@link Inspection};
 * release, cancel, force-release and the batching of renewals here. This class never asks which
 * database it talks to.
 *
 * <p>Auto-commit: single statements (the exclusive fast paths, release, renewal, tokens) commit by
 * themselves only on a connection in auto-commit mode; the caller lends connections inside {@link
 * Transactions#autoCommitted}. Grant transactions run through {@link Transactions#inTransaction}, which
 * commits explicitly and sets server-side lock and idle timeouts.
 *
 * <p>Concurrency: stateless apart from the SQL text; safe for many threads with one connection each.
 * Failure modes: every method throws {@link SQLException} as the driver reports it; the caller decides
 * what to retry. A transaction that fails is rolled back before the exception leaves.
 */
final class LeaseTable {
    /** Longest IN-list of owners in one renewal statement. */
    static final int RENEW_CHUNK = 500;

    private static final String RELEASE_EXCLUSIVE = "UPDATE {L} SET owner = NULL, expires_at = 0"
            + " WHERE ns = ? AND kind = ? AND name_key = ? AND owner = ? AND expires_at > {NOW}";
    private static final String RELEASE_ENTRY = "DELETE FROM {E}"
            + " WHERE ns = ? AND kind = ? AND name_key = ? AND owner = ? AND held = 1 AND expires_at > {NOW}";
    private static final String CANCEL_WAIT =
            "DELETE FROM {E} WHERE ns = ? AND kind = ? AND name_key = ? AND owner = ? AND held = 0";
    private static final String FORCE_EXCLUSIVE = "UPDATE {L} SET owner = NULL, expires_at = 0"
            + " WHERE ns = ? AND kind = ? AND name_key = ? AND owner IS NOT NULL";
    private static final String FORCE_ENTRIES = "DELETE FROM {E} WHERE ns = ? AND kind = ? AND name_key = ?";

    private final Tables tables;
    private final PortableSql sql;
    private final Grants grants;
    private final Inspection inspection;
    private final Transactions transactions;

    /**
     * @param timeoutMillis the operation timeout, from which grant transactions take their server-side
     *     limits ({@link Transactions})
     */
    LeaseTable(Dialect dialect, String prefix, long timeoutMillis) {
        this.tables = new Tables(dialect, prefix);
        this.sql = dialect.sql(tables);
        this.grants = new Grants(sql);
        this.inspection = new Inspection(tables);
        this.transactions = new Transactions(sql, timeoutMillis);
    }

    /** The statements of this table's database (also those of the advisory flavour). */
    PortableSql sql() {
        return sql;
    }

    Dialect dialect() {
        return tables.dialect();
    }

    String prefix() {
        return tables.prefix();
    }

    /** The LISTEN/NOTIFY channel of a resource ({@link Tables#channel}). */
    String channel(LockKey key) {
        return tables.channel(key);
    }

    /** Runs the shipped DDL, each statement committed on its own (PostgreSQL's DDL is transactional). */
    void createTablesIfMissing(Connection c) throws SQLException {
        Transactions.autoCommitted(c, () -> {
            try (Statement st = c.createStatement()) {
                for (String ddl : dialect().ddl(prefix())) {
                    st.execute(ddl);
                }
            }
            return null;
        });
    }

    /**
     * One attempt. Answers granted with the token, or busy with the time until the earliest blocking
     * hold or queue entry runs out by the database clock (-1 when unknown).
     */
    AcquireResult acquire(Connection c, AcquireRequest request) throws SQLException {
        Transactions.SqlWork<AcquireResult> inTransaction =
                () -> transactions.inTransaction(c, () -> grants.acquire(c, request));
        return request.key().mode() == Mode.EXCLUSIVE
                ? sql.acquireExclusive(c, request, inTransaction)
                : inTransaction.run();
    }

    /** Increments and returns the durable token of a resource (advisory flavour: the lock is elsewhere). */
    long nextToken(Connection c, LockKey key) throws SQLException {
        return sql.nextToken(c, key, () -> transactions.inTransaction(c, () -> grants.nextToken(c, key)));
    }

    /** Removes the hold of {@code owner}; true when it was held and live. */
    boolean release(Connection c, LockKey key, String owner) throws SQLException {
        return sql.changeAndWake(c, key, owner, key.mode() == Mode.EXCLUSIVE ? RELEASE_EXCLUSIVE : RELEASE_ENTRY);
    }

    /** Removes the queue entry of {@code owner}; true when there was one. */
    boolean cancelWait(Connection c, LockKey key, String owner) throws SQLException {
        return sql.changeAndWake(c, key, owner, CANCEL_WAIT);
    }

    /** Removes every hold and queue entry of the resource; the token row stays. */
    boolean forceRelease(Connection c, LockKey key) throws SQLException {
        boolean removed;
        try (PreparedStatement ps = sql.prepare(c, key.mode() == Mode.EXCLUSIVE ? FORCE_EXCLUSIVE : FORCE_ENTRIES)) {
            bindKey(ps, 1, key);
            removed = ps.executeUpdate() > 0;
        }
        if (removed) {
            sql.wakeAll(c, key);
        }
        return removed;
    }

    /** Whether the store holds a lease now (one read, no write: {@code LockBackend.holds}). */
    boolean holds(Connection c, RenewRequest lease) throws SQLException {
        return sql.holds(c, lease.key().mode() == Mode.EXCLUSIVE, lease.owner());
    }

    /**
     * Extends every live lease of the batch; returns the owners that are not held any more. Owners are
     * grouped by lease time (normally one) and table, in chunks of {@link #RENEW_CHUNK}; each chunk is
     * one call of {@link PortableSql#renewChunk}. A hold the renewal cut short (an {@code extend} to less
     * than was left) wakes its resource's waiters where the database can push wake-ups: they were told to
     * wait for the old end.
     */
    Set<String> renew(Connection c, List<RenewRequest> batch) throws SQLException {
        Map<Long, List<String>> inline = new LinkedHashMap<>();
        Map<Long, List<String>> rows = new LinkedHashMap<>();
        Map<String, LockKey> keys = new HashMap<>();
        for (RenewRequest r : batch) {
            (r.key().mode() == Mode.EXCLUSIVE ? inline : rows)
                    .computeIfAbsent(r.leaseMillis(), k -> new ArrayList<>())
                    .add(r.owner());
            keys.put(r.owner(), r.key());
        }
        Set<String> lost = new HashSet<>(keys.keySet());
        Set<LockKey> cutShort = new HashSet<>();
        Set<Long> leases = new HashSet<>(inline.keySet());
        leases.addAll(rows.keySet());
        for (long lease : leases) {
            List<String> a = inline.getOrDefault(lease, List.of());
            List<String> b = rows.getOrDefault(lease, List.of());
            for (int i = 0; i < Math.max(a.size(), b.size()); i += RENEW_CHUNK) {
                List<String> ca = a.subList(Math.min(i, a.size()), Math.min(i + RENEW_CHUNK, a.size()));
                List<String> cb = b.subList(Math.min(i, b.size()), Math.min(i + RENEW_CHUNK, b.size()));
                PortableSql.Renewed renewed = sql.renewChunk(c, lease, ca, cb);
                lost.removeAll(renewed.owners());
                renewed.cutShort().forEach(owner -> cutShort.add(keys.get(owner)));
            }
        }
        for (LockKey key : cutShort) {
            sql.wakeAll(c, key);
        }
        return lost;
    }

    /**
     * The database's clock now ({@code {NOW_MICROS}}, the clock of every expiry), in microseconds: the
     * reading that goes with a renewal, one more statement on its connection.
     */
    long nowMicros(Connection c) throws SQLException {
        try (PreparedStatement ps = c.prepareStatement(tables.sql("SELECT {NOW_MICROS}"));
                ResultSet rs = ps.executeQuery()) {
            if (!rs.next()) {
                throw new SQLException("SELECT of the database's clock returned no row");
            }
            return rs.getLong(1);
        }
    }

    LockInfo describe(Connection c, LockKey key) throws SQLException {
        return inspection.describe(c, key);
    }

    List<LockInfo> list(Connection c, String namespace, String prefix) throws SQLException {
        return inspection.list(c, namespace, prefix);
    }
}
