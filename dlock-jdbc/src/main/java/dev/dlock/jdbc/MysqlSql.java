package dev.dlock.jdbc;

import static dev.dlock.jdbc.Tables.bindKey;

import dev.dlock.spi.AcquireRequest;
import dev.dlock.spi.AcquireResult;
import dev.dlock.spi.LockKey;
import java.sql.Connection;
import java.sql.PreparedStatement;
import java.sql.ResultSet;
import java.sql.SQLException;
import java.sql.Statement;
import java.util.HexFormat;

/**
 * MySQL's and MariaDB's fast paths: the exclusive acquire and the advisory flavour's next token in one
 * {@code INSERT ... ON DUPLICATE KEY UPDATE} each. Everything else is the portable SQL ({@link
 * PortableSql}); there is no push wake-up.
 *
 * <p>Design: MySQL has no {@code RETURNING}, so the statement reports the token through {@code
 * LAST_INSERT_ID(expr)}, which the driver hands back as the generated key of that statement: the insert
 * path reports the first token ({@link Tables#nextToken} of nothing: the time floor), the update path the new token when it grants and 0 when it does not. The assignments
 * of {@code ON DUPLICATE KEY UPDATE} run left to right and each condition reads only columns not
 * assigned yet ({@code expires_at} is assigned last).
 *
 * <p>Concurrency and failure modes as {@link PortableSql}.
 */
final class MysqlSql extends PortableSql {
    private static final String ACQUIRE_EXCLUSIVE =
            "INSERT INTO {L} (ns, kind, name_key, name, token, owner, expires_at)"
                    + " VALUES (?, ?, ?, ?, LAST_INSERT_ID({FLOOR}), ?, {NOW} + ?)"
                    + " ON DUPLICATE KEY UPDATE"
                    + " token = IF(expires_at <= {NOW} OR owner <=> VALUES(owner),"
                    + " LAST_INSERT_ID(GREATEST(token + {BLOCK}, {FLOOR})), token + 0 * LAST_INSERT_ID(0)),"
                    + " owner = IF(expires_at <= {NOW} OR owner <=> VALUES(owner), VALUES(owner), owner),"
                    + " expires_at = IF(expires_at <= {NOW} OR owner <=> VALUES(owner),"
                    + " VALUES(expires_at), expires_at)";
    private static final String NEXT_TOKEN = "INSERT INTO {L} (ns, kind, name_key, name, token, owner, expires_at)"
            + " VALUES (?, ?, ?, ?, LAST_INSERT_ID({FLOOR}), NULL, 0)"
            + " ON DUPLICATE KEY UPDATE token = LAST_INSERT_ID(GREATEST(token + {BLOCK}, {FLOOR}))";

    MysqlSql(Tables tables) {
        super(tables);
    }

    /** One statement; a busy answer has no time left (not worth a second round trip). */
    @Override
    AcquireResult acquireExclusive(Connection c, AcquireRequest request, Transactions.SqlWork<AcquireResult> portable)
            throws SQLException {
        LockKey key = request.key();
        try (PreparedStatement ps =
                c.prepareStatement(tables.sql(ACQUIRE_EXCLUSIVE), Statement.RETURN_GENERATED_KEYS)) {
            bindKey(ps, 1, key);
            ps.setString(4, key.name());
            ps.setString(5, request.owner());
            ps.setLong(6, request.leaseMillis());
            long token = insertedId(ps);
            return token > 0 ? AcquireResult.granted(token) : AcquireResult.busy(-1);
        }
    }

    @Override
    long nextToken(Connection c, LockKey key, Transactions.SqlWork<Long> portable) throws SQLException {
        try (PreparedStatement ps = c.prepareStatement(tables.sql(NEXT_TOKEN), Statement.RETURN_GENERATED_KEYS)) {
            bindKey(ps, 1, key);
            ps.setString(4, key.name());
            long token = insertedId(ps);
            if (token <= 0) {
                throw new SQLException("the token of '" + key.name() + "' was not returned");
            }
            return token;
        }
    }

    /** Runs the statement and returns the value it gave {@code LAST_INSERT_ID}, 0 when none. */
    private static long insertedId(PreparedStatement ps) throws SQLException {
        ps.executeUpdate();
        try (ResultSet keys = ps.getGeneratedKeys()) {
            return keys.next() ? keys.getLong(1) : 0;
        }
    }

    /**
     * Session settings in whole seconds, the previous values saved in session variables: one statement
     * now and one to restore after the commit ({@code wait_timeout} is what ends a session whose client
     * went silent inside a transaction).
     */
    @Override
    boolean limitTransaction(Connection c, long timeoutMillis) throws SQLException {
        long seconds = Math.max(1, (timeoutMillis + 999) / 1000);
        try (Statement st = c.createStatement()) {
            st.execute("SET @dlock_lock_wait = @@SESSION.innodb_lock_wait_timeout,"
                    + " @dlock_wait = @@SESSION.wait_timeout,"
                    + " SESSION innodb_lock_wait_timeout = " + seconds + ","
                    + " SESSION wait_timeout = " + seconds);
        }
        return true;
    }

    @Override
    void restoreSessionLimits(Connection c) throws SQLException {
        try (Statement st = c.createStatement()) {
            st.execute("SET SESSION innodb_lock_wait_timeout = @dlock_lock_wait,"
                    + " SESSION wait_timeout = @dlock_wait, @dlock_lock_wait = NULL, @dlock_wait = NULL");
        }
    }

    @Override
    boolean hasAdvisoryLocks() {
        return true;
    }

    /** A name of at most 64 characters. */
    @Override
    String advisoryLockId(LockKey key) {
        return "dlock:" + HexFormat.of().formatHex(advisoryHash(key)).substring(0, 58);
    }

    @Override
    AdvisoryTry tryAdvisoryLock(Connection c, String id) throws SQLException {
        try (PreparedStatement ps =
                c.prepareStatement("SELECT GET_LOCK(?, 0), " + tables.dialect().sessionIdSql())) {
            ps.setString(1, id);
            try (ResultSet rs = ps.executeQuery()) {
                rs.next();
                return new AdvisoryTry(rs.getInt(1) == 1, rs.getLong(2));
            }
        }
    }

    @Override
    boolean releaseAdvisoryLock(Connection c, String id, LockKey key) throws SQLException {
        try (PreparedStatement ps = c.prepareStatement("SELECT RELEASE_LOCK(?)")) {
            ps.setString(1, id);
            try (ResultSet rs = ps.executeQuery()) {
                rs.next();
                return rs.getInt(1) == 1;
            }
        }
    }

    @Override
    String releaseAllAdvisoryLocks() {
        return "SELECT RELEASE_ALL_LOCKS()";
    }
}
