package dev.dlock.jdbc;

import java.sql.Connection;
import java.sql.SQLException;

/**
 * How the backend uses a connection it borrows, whatever state the pool hands it out in.
 *
 * <p>Auto-commit: the backend never depends on the pool's setting. A call that relies on single
 * statements committing on their own ({@link #autoCommitted}) switches the borrowed connection to
 * auto-commit and back; a multi-statement grant ({@link #inTransaction}) commits explicitly and restores
 * what it found. With a pool whose connections come with auto-commit off (HikariCP {@code
 * autoCommit=false}), a statement would otherwise run in a transaction the pool rolls back when the
 * connection returns, and a grant, release or renewal would silently not happen. Switching costs nothing
 * on PostgreSQL (the driver starts transactions lazily) and one round trip each way on MySQL/MariaDB, and
 * only for such pools.
 *
 * <p>Server-side timeouts: a client that stops (pause, partition) between a {@code SELECT ... FOR
 * UPDATE} and its commit leaves a transaction holding row locks that every other grant and renewal of
 * that resource waits for. Every transaction therefore carries limits taken from the operation timeout:
 * PostgreSQL {@code lock_timeout} and {@code idle_in_transaction_session_timeout} ({@code SET LOCAL}:
 * they end with the transaction); MySQL/MariaDB {@code innodb_lock_wait_timeout} and {@code wait_timeout}
 * (whole seconds, session settings saved before and restored after, so the pool gets its connection back
 * as it was; {@code wait_timeout} is what ends a session whose client went silent inside a transaction);
 * H2 keeps its own {@code LOCK_TIMEOUT} (2 s unless the URL sets another) and has no idle-transaction
 * limit; it is meant for one process or tests. A session stopped mid-transaction is thus ended by the
 * server, and its locks freed, about one operation timeout later. The statements that set and restore
 * the limits are the dialect's ({@link PortableSql#limitTransaction}); this class never asks which
 * database it talks to.
 *
 * <p>Concurrency: stateless; safe for many threads with one connection each.
 */
final class Transactions {
    /** The work of one call on a connection. */
    interface SqlWork<T> {
        T run() throws SQLException;
    }

    private final PortableSql sql;
    private final long timeoutMillis;

    /**
     * @param sql the database's statements, which set and restore the limits ({@link
     *     PortableSql#limitTransaction})
     * @param timeoutMillis the operation timeout the limits are taken from
     */
    Transactions(PortableSql sql, long timeoutMillis) {
        if (timeoutMillis <= 0) {
            throw new IllegalArgumentException("timeoutMillis must be positive, got " + timeoutMillis);
        }
        this.sql = sql;
        this.timeoutMillis = timeoutMillis;
    }

    /**
     * Runs work whose statements must each commit on their own: with auto-commit on, then restores the
     * connection's setting.
     */
    static <T> T autoCommitted(Connection c, SqlWork<T> work) throws SQLException {
        if (c.getAutoCommit()) {
            return work.run();
        }
        c.setAutoCommit(true);
        T result;
        try {
            result = work.run();
        } catch (SQLException | RuntimeException e) {
            restoreAutoCommitOff(c);
            throw e;
        }
        restoreAutoCommitOff(c);
        return result;
    }

    /**
     * Gives the pool back its setting; a connection that cannot take it is discarded, never lent to the
     * application in auto-commit mode. The work already done stands.
     */
    private static void restoreAutoCommitOff(Connection c) {
        try {
            c.setAutoCommit(false);
        } catch (SQLException | RuntimeException e) {
            DedicatedSession.discard(c);
        }
    }

    /**
     * Runs work as one transaction with the server-side limits above, commits it, and restores the
     * connection's auto-commit setting and session limits. A failure rolls back before it leaves.
     */
    <T> T inTransaction(Connection c, SqlWork<T> work) throws SQLException {
        return transaction(c, this, work);
    }

    /** Runs work as one transaction without server-side limits (the application's own connection). */
    static <T> T plainTransaction(Connection c, SqlWork<T> work) throws SQLException {
        return transaction(c, null, work);
    }

    private static <T> T transaction(Connection c, Transactions limits, SqlWork<T> work) throws SQLException {
        boolean wasAutoCommit = c.getAutoCommit();
        if (wasAutoCommit) {
            c.setAutoCommit(false);
        }
        boolean sessionLimits = false;
        try {
            sessionLimits = limits != null && limits.sql.limitTransaction(c, limits.timeoutMillis);
            T result = work.run();
            c.commit();
            return result;
        } catch (SQLException | RuntimeException e) {
            try {
                c.rollback();
            } catch (SQLException suppressed) {
                e.addSuppressed(suppressed);
            }
            throw e;
        } finally {
            try {
                if (sessionLimits) {
                    limits.sql.restoreSessionLimits(c);
                }
                if (wasAutoCommit) {
                    c.setAutoCommit(true);
                }
            } catch (SQLException | RuntimeException e) {
                if (limits != null) {
                    // Borrowed by the backend, not as the pool lent it (short timeouts, auto-commit off):
                    // it must not go back. The application's own connection stays the application's.
                    DedicatedSession.discard(c);
                }
            }
        }
    }
}
