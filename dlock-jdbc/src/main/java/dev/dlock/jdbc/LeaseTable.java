package dev.dlock.jdbc;

import dev.dlock.LockInfo;
import dev.dlock.spi.AcquireRequest;
import dev.dlock.spi.AcquireResult;
import dev.dlock.spi.LockKey;
import dev.dlock.spi.Mode;
import dev.dlock.spi.RenewRequest;
import java.nio.charset.StandardCharsets;
import java.security.MessageDigest;
import java.security.NoSuchAlgorithmException;
import java.sql.Connection;
import java.sql.PreparedStatement;
import java.sql.ResultSet;
import java.sql.SQLException;
import java.sql.Statement;
import java.time.Duration;
import java.util.ArrayList;
import java.util.Collection;
import java.util.HashSet;
import java.util.HexFormat;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Locale;
import java.util.Map;
import java.util.Set;

/**
 * The lock primitives as SQL against the two lease tables, one call per primitive, synchronous, on a
 * connection the caller lends.
 *
 * <p>Tables: {@code <prefix>locks} has one row per (namespace, kind, name) that is never deleted. It
 * keeps the last fencing token handed out and, for exclusive locks, the holder inline, so that an
 * exclusive acquire is one statement on PostgreSQL ({@code INSERT ... ON CONFLICT ... DO UPDATE ... WHERE
 * expired RETURNING}) and MySQL ({@code INSERT ... ON DUPLICATE KEY UPDATE} with the token returned
 * through {@code LAST_INSERT_ID(expr)}). {@code <prefix>entries} has the holders and queue entries of
 * fair locks, read-write locks and semaphores. Names are bind parameters; the key column holds the
 * SHA-256 of the name (fixed width), the full name is kept beside it.
 *
 * <p>Grants of the multi-row kinds run as one short transaction: lock the resource's row (which
 * serialises every grant of that resource), read its entries {@code FOR UPDATE} in id order, decide in
 * Java by the rules of {@code LockBackend}, write, commit. The token is incremented in that transaction.
 * Every time compared or stored is the database's clock ({@link Dialect#nowMillis()}).
 *
 * <p>Concurrency: stateless apart from the SQL strings; safe for many threads with one connection each.
 * Lock order is always the resource row, then entry rows in id order (renewals lock entry rows in id
 * order too), so grants, releases and renewals do not deadlock one another.
 *
 * <p>Auto-commit: the single-statement paths (exclusive acquire on PostgreSQL and MySQL, release, renewal,
 * tokens) commit by themselves only on a connection in auto-commit mode; the caller lends connections
 * inside {@link Transactions#autoCommitted}. Multi-statement grants run through {@link
 * Transactions#inTransaction}, which commits explicitly and sets server-side lock and idle timeouts.
 *
 * <p>Failure modes: every method throws {@link SQLException} as the driver reports it; the caller decides
 * what to retry. A transaction that fails is rolled back before the exception leaves.
 */
final class LeaseTable {
    /** Longest IN-list of owners in one renewal statement. */
    static final int RENEW_CHUNK = 500;

    private final Dialect dialect;
    private final String prefix;
    private final String locks;
    private final String entries;
    private final Transactions transactions;

    LeaseTable(Dialect dialect, String prefix, Transactions transactions) {
        this.dialect = dialect;
        this.prefix = prefix;
        this.locks = prefix + "locks";
        this.entries = prefix + "entries";
        this.transactions = transactions;
    }

    Dialect dialect() {
        return dialect;
    }

    String prefix() {
        return prefix;
    }

    /** Fills in table names and the clock expression. Only constants reach the SQL text. */
    private String sql(String template) {
        return template.replace("{L}", locks).replace("{E}", entries).replace("{NOW}", dialect.nowMillis());
    }

    /** The stored key of a name: hex SHA-256 of its UTF-8 bytes, 64 characters. */
    static String nameKey(String name) {
        return HexFormat.of().formatHex(sha256(name));
    }

    static byte[] sha256(String text) {
        try {
            return MessageDigest.getInstance("SHA-256").digest(text.getBytes(StandardCharsets.UTF_8));
        } catch (NoSuchAlgorithmException e) {
            throw new IllegalStateException("the JVM has no SHA-256", e);
        }
    }

    /** The LISTEN/NOTIFY channel of a resource (all modes of its kind), a safe identifier. */
    String channel(LockKey key) {
        String id = prefix + '\n' + key.namespace() + '\n' + key.kind() + '\n' + key.name();
        return "dlock_" + HexFormat.of().formatHex(sha256(id)).substring(0, 40);
    }

    private static void bindKey(PreparedStatement ps, int from, LockKey key) throws SQLException {
        ps.setString(from, key.namespace());
        ps.setString(from + 1, key.kind());
        ps.setString(from + 2, nameKey(key.name()));
    }

    private static String mode(Mode mode) {
        return mode.name().toLowerCase(Locale.ROOT);
    }

    // ---- DDL

    /** Runs the shipped DDL, each statement committed on its own (PostgreSQL's DDL is transactional). */
    void createTablesIfMissing(Connection c) throws SQLException {
        Transactions.autoCommitted(c, () -> {
            try (Statement st = c.createStatement()) {
                for (String ddl : dialect.ddl(prefix)) {
                    st.execute(ddl);
                }
            }
            return null;
        });
    }

    // ---- acquire

    /**
     * One attempt. Answers granted with the token, or busy with the time until the earliest blocking
     * hold or queue entry runs out by the database clock (-1 when unknown).
     */
    AcquireResult acquire(Connection c, AcquireRequest request) throws SQLException {
        if (request.key().mode() == Mode.EXCLUSIVE) {
            if (dialect == Dialect.POSTGRESQL) {
                return acquireExclusivePostgres(c, request);
            }
            if (dialect == Dialect.MYSQL) {
                return acquireExclusiveMysql(c, request);
            }
        }
        return transactions.inTransaction(c, () -> acquireInTransaction(c, request));
    }

    private static final String PG_ACQUIRE_EXCLUSIVE = "WITH up AS ("
            + " INSERT INTO {L} AS l (ns, kind, name_key, name, token, owner, expires_at)"
            + " VALUES (?, ?, ?, ?, 1, ?, {NOW} + ?)"
            + " ON CONFLICT (ns, kind, name_key) DO UPDATE"
            + " SET token = l.token + 1, owner = excluded.owner, expires_at = excluded.expires_at"
            + " WHERE l.expires_at <= {NOW} OR l.owner = excluded.owner"
            + " RETURNING l.token)"
            + " SELECT (SELECT token FROM up),"
            + " (SELECT GREATEST(l.expires_at - {NOW}, 0) FROM {L} l WHERE l.ns = ? AND l.kind = ? AND l.name_key = ?)";

    private AcquireResult acquireExclusivePostgres(Connection c, AcquireRequest request) throws SQLException {
        LockKey key = request.key();
        try (PreparedStatement ps = c.prepareStatement(sql(PG_ACQUIRE_EXCLUSIVE))) {
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

    // The insert path reports token 1 through LAST_INSERT_ID(1); the update path reports the new token
    // when it grants and resets LAST_INSERT_ID to 0 when it does not. Assignments run left to right and
    // each condition reads only columns not yet assigned (expires_at is assigned last).
    private static final String MYSQL_ACQUIRE_EXCLUSIVE =
            "INSERT INTO {L} (ns, kind, name_key, name, token, owner, expires_at)"
                    + " VALUES (?, ?, ?, ?, LAST_INSERT_ID(1), ?, {NOW} + ?)"
                    + " ON DUPLICATE KEY UPDATE"
                    + " token = IF(expires_at <= {NOW} OR owner <=> VALUES(owner),"
                    + " LAST_INSERT_ID(token + 1), token + 0 * LAST_INSERT_ID(0)),"
                    + " owner = IF(expires_at <= {NOW} OR owner <=> VALUES(owner), VALUES(owner), owner),"
                    + " expires_at = IF(expires_at <= {NOW} OR owner <=> VALUES(owner),"
                    + " VALUES(expires_at), expires_at)";

    private AcquireResult acquireExclusiveMysql(Connection c, AcquireRequest request) throws SQLException {
        LockKey key = request.key();
        try (PreparedStatement ps = c.prepareStatement(sql(MYSQL_ACQUIRE_EXCLUSIVE), Statement.RETURN_GENERATED_KEYS)) {
            bindKey(ps, 1, key);
            ps.setString(4, key.name());
            ps.setString(5, request.owner());
            ps.setLong(6, request.leaseMillis());
            ps.executeUpdate();
            long token = 0;
            try (ResultSet keys = ps.getGeneratedKeys()) {
                if (keys.next()) {
                    token = keys.getLong(1);
                }
            }
            // Busy: the caller backs off; the holder's time left is not worth a second round trip.
            return token > 0 ? AcquireResult.granted(token) : AcquireResult.busy(-1);
        }
    }

    /** The resource row, locked for the rest of the transaction, and the database's now. */
    private record ResourceRow(long token, String owner, long expiresAt, long now) {}

    private static final String PG_LOCK_ROW =
            "INSERT INTO {L} AS l (ns, kind, name_key, name, token, owner, expires_at) VALUES (?, ?, ?, ?, 0, NULL, 0)"
                    + " ON CONFLICT (ns, kind, name_key) DO UPDATE SET token = l.token"
                    + " RETURNING l.token, l.owner, l.expires_at, {NOW}";
    private static final String SELECT_ROW_FOR_UPDATE =
            "SELECT token, owner, expires_at, {NOW} FROM {L} WHERE ns = ? AND kind = ? AND name_key = ? FOR UPDATE";
    private static final String INSERT_ROW =
            "INSERT INTO {L} (ns, kind, name_key, name, token, owner, expires_at) VALUES (?, ?, ?, ?, 0, NULL, 0)";

    private ResourceRow lockRow(Connection c, LockKey key) throws SQLException {
        if (dialect == Dialect.POSTGRESQL) {
            try (PreparedStatement ps = c.prepareStatement(sql(PG_LOCK_ROW))) {
                bindKey(ps, 1, key);
                ps.setString(4, key.name());
                try (ResultSet rs = ps.executeQuery()) {
                    rs.next();
                    return new ResourceRow(rs.getLong(1), rs.getString(2), rs.getLong(3), rs.getLong(4));
                }
            }
        }
        ResourceRow row = selectRowForUpdate(c, key);
        if (row != null) {
            return row;
        }
        try (PreparedStatement ps = c.prepareStatement(sql(INSERT_ROW))) {
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
        try (PreparedStatement ps = c.prepareStatement(sql(SELECT_ROW_FOR_UPDATE))) {
            bindKey(ps, 1, key);
            try (ResultSet rs = ps.executeQuery()) {
                return rs.next() ? new ResourceRow(rs.getLong(1), rs.getString(2), rs.getLong(3), rs.getLong(4)) : null;
            }
        }
    }

    static boolean isDuplicateKey(SQLException e) {
        String state = e.getSQLState();
        return state != null && state.startsWith("23") || e.getErrorCode() == 1062;
    }

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

    private AcquireResult acquireInTransaction(Connection c, AcquireRequest request) throws SQLException {
        LockKey key = request.key();
        String owner = request.owner();
        ResourceRow row = lockRow(c, key);
        long now = row.now();
        if (key.mode() == Mode.EXCLUSIVE) {
            if (row.expiresAt() <= now || owner.equals(row.owner())) {
                long token = row.token() + 1;
                try (PreparedStatement ps = c.prepareStatement(sql(SET_EXCLUSIVE))) {
                    ps.setLong(1, token);
                    ps.setString(2, owner);
                    ps.setLong(3, now + request.leaseMillis());
                    bindKey(ps, 4, key);
                    ps.executeUpdate();
                }
                return AcquireResult.granted(token);
            }
            return AcquireResult.busy(row.expiresAt() - now);
        }
        List<Entry> holders = new ArrayList<>();
        List<Entry> queue = new ArrayList<>();
        boolean anyExpired = false;
        Entry own = null;
        try (PreparedStatement ps = c.prepareStatement(sql(SELECT_ENTRIES))) {
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
        String downgradeFrom = request.downgradeFrom();
        boolean grant =
                switch (key.mode()) {
                    case FAIR ->
                        holders.isEmpty()
                                && (queue.isEmpty() || queue.get(0).owner().equals(owner));
                    case READ ->
                        holders.stream()
                                        .noneMatch(h -> h.mode().equals("write")
                                                && !h.owner().equals(downgradeFrom))
                                && (queue.isEmpty() || downgradeFrom != null);
                    case WRITE -> holders.isEmpty();
                    case PERMIT -> holders.size() < request.permits();
                    case EXCLUSIVE -> throw new IllegalStateException("handled above");
                };
        if (own != null && own.held()) {
            grant = true; // a retried attempt whose first grant committed: grant again with a new token
        }
        if (anyExpired) {
            try (PreparedStatement ps = c.prepareStatement(sql(DELETE_EXPIRED))) {
                bindKey(ps, 1, key);
                ps.setLong(4, now);
                ps.executeUpdate();
            }
        }
        if (grant) {
            long token = row.token() + 1;
            try (PreparedStatement ps = c.prepareStatement(sql(SET_TOKEN))) {
                ps.setLong(1, token);
                bindKey(ps, 2, key);
                ps.executeUpdate();
            }
            writeEntry(c, key, owner, mode(key.mode()), true, token, now + request.leaseMillis(), own != null);
            return AcquireResult.granted(token);
        }
        if (request.waiting() && (key.mode() == Mode.FAIR || key.mode() == Mode.WRITE)) {
            writeEntry(c, key, owner, mode(key.mode()), false, 0, now + request.queueMillis(), own != null);
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
            try (PreparedStatement ps = c.prepareStatement(sql(UPDATE_ENTRY))) {
                ps.setString(1, mode);
                ps.setInt(2, held ? 1 : 0);
                ps.setLong(3, token);
                ps.setLong(4, expiresAt);
                bindKey(ps, 5, key);
                ps.setString(8, owner);
                ps.executeUpdate();
            }
        } else {
            try (PreparedStatement ps = c.prepareStatement(sql(INSERT_ENTRY))) {
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

    // ---- release, cancel, force

    private static final String RELEASE_EXCLUSIVE = "UPDATE {L} SET owner = NULL, expires_at = 0"
            + " WHERE ns = ? AND kind = ? AND name_key = ? AND owner = ? AND expires_at > {NOW}";
    private static final String RELEASE_ENTRY = "DELETE FROM {E}"
            + " WHERE ns = ? AND kind = ? AND name_key = ? AND owner = ? AND held = 1 AND expires_at > {NOW}";
    private static final String CANCEL_WAIT =
            "DELETE FROM {E} WHERE ns = ? AND kind = ? AND name_key = ? AND owner = ? AND held = 0";
    // PostgreSQL: the change and its wake-up in one statement; pg_notify runs once per changed row and the
    // notification is delivered when the statement's transaction commits.
    private static final String PG_NOTIFY_ANY = " SELECT pg_notify(?, '') FROM changed";
    private static final String PG_NOTIFY_HEAD = " SELECT pg_notify(?, COALESCE((SELECT q.owner FROM {E} q"
            + " WHERE q.ns = ? AND q.kind = ? AND q.name_key = ? AND q.held = 0 AND q.expires_at > {NOW}"
            + " AND q.owner <> ? ORDER BY q.id LIMIT 1), '')) FROM changed";

    /** Removes the hold of {@code owner}; true when it was held and live. */
    boolean release(Connection c, LockKey key, String owner) throws SQLException {
        String change = key.mode() == Mode.EXCLUSIVE ? RELEASE_EXCLUSIVE : RELEASE_ENTRY;
        return changeAndWake(c, key, owner, change);
    }

    /** Removes the queue entry of {@code owner}; true when there was one. */
    boolean cancelWait(Connection c, LockKey key, String owner) throws SQLException {
        return changeAndWake(c, key, owner, CANCEL_WAIT);
    }

    private boolean changeAndWake(Connection c, LockKey key, String owner, String change) throws SQLException {
        if (dialect != Dialect.POSTGRESQL) {
            try (PreparedStatement ps = c.prepareStatement(sql(change))) {
                bindKey(ps, 1, key);
                ps.setString(4, owner);
                return ps.executeUpdate() > 0;
            }
        }
        boolean fair = key.mode() == Mode.FAIR;
        String text = "WITH changed AS (" + change + " RETURNING 1)" + (fair ? PG_NOTIFY_HEAD : PG_NOTIFY_ANY);
        try (PreparedStatement ps = c.prepareStatement(sql(text))) {
            bindKey(ps, 1, key);
            ps.setString(4, owner);
            ps.setString(5, channel(key));
            if (fair) {
                bindKey(ps, 6, key);
                ps.setString(9, owner);
            }
            try (ResultSet rs = ps.executeQuery()) {
                return rs.next();
            }
        }
    }

    private static final String FORCE_EXCLUSIVE = "UPDATE {L} SET owner = NULL, expires_at = 0"
            + " WHERE ns = ? AND kind = ? AND name_key = ? AND owner IS NOT NULL";
    private static final String FORCE_ENTRIES = "DELETE FROM {E} WHERE ns = ? AND kind = ? AND name_key = ?";

    /** Removes every hold and queue entry of the resource; the token row stays. */
    boolean forceRelease(Connection c, LockKey key) throws SQLException {
        boolean removed;
        try (PreparedStatement ps =
                c.prepareStatement(sql(key.mode() == Mode.EXCLUSIVE ? FORCE_EXCLUSIVE : FORCE_ENTRIES))) {
            bindKey(ps, 1, key);
            removed = ps.executeUpdate() > 0;
        }
        if (removed && dialect == Dialect.POSTGRESQL) {
            try (PreparedStatement ps = c.prepareStatement("SELECT pg_notify(?, '')")) {
                ps.setString(1, channel(key));
                ps.executeQuery().close();
            }
        }
        return removed;
    }

    // ---- renew

    /**
     * Extends every live lease of the batch; returns the owners that are not held any more. One statement
     * per table and lease time (PostgreSQL: one statement for both tables), in chunks of {@link
     * #RENEW_CHUNK} owners.
     */
    Set<String> renew(Connection c, List<RenewRequest> batch) throws SQLException {
        Map<Long, List<String>> inline = new LinkedHashMap<>();
        Map<Long, List<String>> rows = new LinkedHashMap<>();
        Set<String> lost = new HashSet<>();
        for (RenewRequest r : batch) {
            (r.key().mode() == Mode.EXCLUSIVE ? inline : rows)
                    .computeIfAbsent(r.leaseMillis(), k -> new ArrayList<>())
                    .add(r.owner());
            lost.add(r.owner());
        }
        Set<Long> leases = new HashSet<>(inline.keySet());
        leases.addAll(rows.keySet());
        for (long lease : leases) {
            List<String> a = inline.getOrDefault(lease, List.of());
            List<String> b = rows.getOrDefault(lease, List.of());
            for (int i = 0; i < Math.max(a.size(), b.size()); i += RENEW_CHUNK) {
                List<String> ca = a.subList(Math.min(i, a.size()), Math.min(i + RENEW_CHUNK, a.size()));
                List<String> cb = b.subList(Math.min(i, b.size()), Math.min(i + RENEW_CHUNK, b.size()));
                lost.removeAll(renewChunk(c, lease, ca, cb));
            }
        }
        return lost;
    }

    private static String placeholders(int n) {
        return String.join(", ", java.util.Collections.nCopies(n, "?"));
    }

    private static final String RENEW_INLINE =
            "UPDATE {L} SET expires_at = {NOW} + ? WHERE owner IN (%s) AND expires_at > {NOW}";
    // Entry rows are locked in id order, the order grants lock them in, so renewals never deadlock grants.
    private static final String PG_RENEW_ROWS = "UPDATE {E} SET expires_at = {NOW} + ? WHERE id IN"
            + " (SELECT id FROM {E} WHERE owner IN (%s) AND held = 1 ORDER BY id FOR UPDATE) AND expires_at > {NOW}";
    private static final String RENEW_ROWS =
            "UPDATE {E} SET expires_at = {NOW} + ? WHERE owner IN (%s) AND held = 1 AND expires_at > {NOW}";
    private static final String LIVE_INLINE = "SELECT owner FROM {L} WHERE owner IN (%s) AND expires_at > {NOW}";
    private static final String LIVE_ROWS =
            "SELECT owner FROM {E} WHERE owner IN (%s) AND held = 1 AND expires_at > {NOW}";

    /** Renews two chunks with one lease time; returns the owners renewed. */
    private Set<String> renewChunk(Connection c, long lease, List<String> inline, List<String> rows)
            throws SQLException {
        Set<String> renewed = new HashSet<>();
        if (dialect == Dialect.POSTGRESQL) {
            List<String> parts = new ArrayList<>();
            List<String> selects = new ArrayList<>();
            if (!inline.isEmpty()) {
                parts.add("a AS (" + RENEW_INLINE.formatted(placeholders(inline.size())) + " RETURNING owner)");
                selects.add("SELECT owner FROM a");
            }
            if (!rows.isEmpty()) {
                parts.add("b AS (" + PG_RENEW_ROWS.formatted(placeholders(rows.size())) + " RETURNING owner)");
                selects.add("SELECT owner FROM b");
            }
            String text = "WITH " + String.join(", ", parts) + " " + String.join(" UNION ALL ", selects);
            try (PreparedStatement ps = c.prepareStatement(sql(text))) {
                int i = 1;
                if (!inline.isEmpty()) {
                    ps.setLong(i++, lease);
                    for (String o : inline) {
                        ps.setString(i++, o);
                    }
                }
                if (!rows.isEmpty()) {
                    ps.setLong(i++, lease);
                    for (String o : rows) {
                        ps.setString(i++, o);
                    }
                }
                try (ResultSet rs = ps.executeQuery()) {
                    while (rs.next()) {
                        renewed.add(rs.getString(1));
                    }
                }
            }
            return renewed;
        }
        renewed.addAll(renewOneTable(c, lease, inline, RENEW_INLINE, LIVE_INLINE));
        renewed.addAll(renewOneTable(c, lease, rows, RENEW_ROWS, LIVE_ROWS));
        return renewed;
    }

    /** MySQL and H2: an UPDATE, and only when it matched fewer rows than owners, a SELECT of the live ones. */
    private Collection<String> renewOneTable(Connection c, long lease, List<String> owners, String update, String live)
            throws SQLException {
        if (owners.isEmpty()) {
            return List.of();
        }
        int matched;
        try (PreparedStatement ps = c.prepareStatement(sql(update.formatted(placeholders(owners.size()))))) {
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
        try (PreparedStatement ps = c.prepareStatement(sql(live.formatted(placeholders(owners.size()))))) {
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

    // ---- describe, list

    private static final String DESCRIBE_INLINE = "SELECT owner, token, expires_at - {NOW} FROM {L}"
            + " WHERE ns = ? AND kind = ? AND name_key = ? AND owner IS NOT NULL AND expires_at > {NOW}";
    private static final String DESCRIBE_ROWS = "SELECT owner, mode, held, token, expires_at - {NOW} FROM {E}"
            + " WHERE ns = ? AND kind = ? AND name_key = ? AND expires_at > {NOW} ORDER BY id";

    LockInfo describe(Connection c, LockKey key) throws SQLException {
        List<LockInfo.Holder> holders = new ArrayList<>();
        int waiters = 0;
        if (key.mode() == Mode.EXCLUSIVE) {
            try (PreparedStatement ps = c.prepareStatement(sql(DESCRIBE_INLINE))) {
                bindKey(ps, 1, key);
                try (ResultSet rs = ps.executeQuery()) {
                    while (rs.next()) {
                        holders.add(new LockInfo.Holder(
                                rs.getString(1), rs.getLong(2), "exclusive", Duration.ofMillis(rs.getLong(3))));
                    }
                }
            }
        } else {
            try (PreparedStatement ps = c.prepareStatement(sql(DESCRIBE_ROWS))) {
                bindKey(ps, 1, key);
                try (ResultSet rs = ps.executeQuery()) {
                    while (rs.next()) {
                        if (rs.getInt(3) == 1) {
                            holders.add(new LockInfo.Holder(
                                    rs.getString(1), rs.getLong(4), rs.getString(2), Duration.ofMillis(rs.getLong(5))));
                        } else {
                            waiters++;
                        }
                    }
                }
            }
        }
        return new LockInfo(key.name(), key.kind(), holders, waiters);
    }

    private static final String LIST_INLINE = "SELECT kind, name, owner, token, expires_at - {NOW} FROM {L}"
            + " WHERE ns = ? AND owner IS NOT NULL AND expires_at > {NOW}";
    private static final String LIST_ROWS = "SELECT l.kind, l.name, e.owner, e.mode, e.held, e.token,"
            + " e.expires_at - {NOW} FROM {E} e JOIN {L} l"
            + " ON l.ns = e.ns AND l.kind = e.kind AND l.name_key = e.name_key"
            + " WHERE e.ns = ? AND e.expires_at > {NOW} ORDER BY e.id";

    List<LockInfo> list(Connection c, String namespace, String prefix) throws SQLException {
        record Resource(String kind, String name) {}
        Map<Resource, List<LockInfo.Holder>> holders = new LinkedHashMap<>();
        Map<Resource, Integer> waiters = new LinkedHashMap<>();
        try (PreparedStatement ps = c.prepareStatement(sql(LIST_INLINE))) {
            ps.setString(1, namespace);
            try (ResultSet rs = ps.executeQuery()) {
                while (rs.next()) {
                    if (rs.getString(2).startsWith(prefix)) {
                        holders.computeIfAbsent(new Resource(rs.getString(1), rs.getString(2)), k -> new ArrayList<>())
                                .add(new LockInfo.Holder(
                                        rs.getString(3), rs.getLong(4), "exclusive", Duration.ofMillis(rs.getLong(5))));
                    }
                }
            }
        }
        try (PreparedStatement ps = c.prepareStatement(sql(LIST_ROWS))) {
            ps.setString(1, namespace);
            try (ResultSet rs = ps.executeQuery()) {
                while (rs.next()) {
                    if (!rs.getString(2).startsWith(prefix)) {
                        continue;
                    }
                    Resource r = new Resource(rs.getString(1), rs.getString(2));
                    if (rs.getInt(5) == 1) {
                        holders.computeIfAbsent(r, k -> new ArrayList<>())
                                .add(new LockInfo.Holder(
                                        rs.getString(3),
                                        rs.getLong(6),
                                        rs.getString(4),
                                        Duration.ofMillis(rs.getLong(7))));
                    } else {
                        waiters.merge(r, 1, Integer::sum);
                    }
                }
            }
        }
        List<LockInfo> result = new ArrayList<>();
        holders.forEach((r, h) -> result.add(new LockInfo(r.name(), r.kind(), h, waiters.getOrDefault(r, 0))));
        return result;
    }

    // ---- fencing tokens for the advisory flavour

    private static final String PG_NEXT_TOKEN =
            "INSERT INTO {L} AS l (ns, kind, name_key, name, token, owner, expires_at)"
                    + " VALUES (?, ?, ?, ?, 1, NULL, 0) ON CONFLICT (ns, kind, name_key) DO UPDATE SET token = l.token + 1"
                    + " RETURNING l.token";
    private static final String MYSQL_NEXT_TOKEN =
            "INSERT INTO {L} (ns, kind, name_key, name, token, owner, expires_at)"
                    + " VALUES (?, ?, ?, ?, LAST_INSERT_ID(1), NULL, 0) ON DUPLICATE KEY UPDATE token = LAST_INSERT_ID(token + 1)";

    /** Increments and returns the durable token of a resource (advisory flavour: the lock is elsewhere). */
    long nextToken(Connection c, LockKey key) throws SQLException {
        if (dialect == Dialect.POSTGRESQL) {
            try (PreparedStatement ps = c.prepareStatement(sql(PG_NEXT_TOKEN))) {
                bindKey(ps, 1, key);
                ps.setString(4, key.name());
                try (ResultSet rs = ps.executeQuery()) {
                    rs.next();
                    return rs.getLong(1);
                }
            }
        }
        if (dialect == Dialect.MYSQL) {
            try (PreparedStatement ps = c.prepareStatement(sql(MYSQL_NEXT_TOKEN), Statement.RETURN_GENERATED_KEYS)) {
                bindKey(ps, 1, key);
                ps.setString(4, key.name());
                ps.executeUpdate();
                try (ResultSet keys = ps.getGeneratedKeys()) {
                    keys.next();
                    return keys.getLong(1);
                }
            }
        }
        return transactions.inTransaction(c, () -> {
            ResourceRow row = lockRow(c, key);
            try (PreparedStatement ps = c.prepareStatement(sql(SET_TOKEN))) {
                ps.setLong(1, row.token() + 1);
                bindKey(ps, 2, key);
                ps.executeUpdate();
            }
            return row.token() + 1;
        });
    }
}
