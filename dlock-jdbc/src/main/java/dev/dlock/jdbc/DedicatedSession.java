package dev.dlock.jdbc;

import java.sql.Connection;
import java.sql.ResultSet;
import java.sql.SQLException;
import java.sql.Statement;
import java.util.concurrent.ExecutorService;
import java.util.concurrent.TimeUnit;

/**
 * A connection the backend keeps for a long time and whose database session carries state: the
 * PostgreSQL {@code LISTEN} connection ({@link PgNotifier}) and the advisory-lock session ({@link
 * AdvisoryLocks}). With a {@code DataSource} backend it is borrowed from the application's pool, so it
 * must go back exactly as it came, or not at all.
 *
 * <p>Opening switches the connection to auto-commit ({@code LISTEN} takes effect only when committed, and
 * the token statements of the advisory flavour must commit) and records the session's identity: {@code
 * pg_backend_pid()}, {@code CONNECTION_ID()}, H2's {@code SESSION_ID()}. {@link #isSameSession} compares it
 * again, so that a driver or proxy that reconnects transparently behind the {@code Connection} object is
 * noticed: the new session holds none of the old one's locks.
 *
 * <p>Giving it back ({@link #release}) first runs a cleanup statement ({@code UNLISTEN *}, releasing all
 * advisory locks), then restores auto-commit; if anything fails, or the session is suspect, it is
 * {@link #discard discarded} instead: aborted (the driver drops the socket, the database ends the session
 * and frees what it held) and closed, so that a pool sees a broken connection and evicts it rather than
 * lending it to the application still listening or holding locks.
 *
 * <p>Concurrency: used by one thread at a time, except {@link #discard}, which JDBC's {@code abort} allows
 * from any thread (the closing thread uses it when the owning thread is stuck).
 */
final class DedicatedSession {
    /** Where dedicated connections come from: the application's data source or the driver. */
    interface Source {
        Connection open() throws SQLException;
    }

    private final Connection connection;
    private final Dialect dialect;
    private final boolean autoCommitWasOff;
    private final long id;

    private DedicatedSession(Connection connection, Dialect dialect, boolean autoCommitWasOff, long id) {
        this.connection = connection;
        this.dialect = dialect;
        this.autoCommitWasOff = autoCommitWasOff;
        this.id = id;
    }

    /** Opens a session, in auto-commit mode, and records its identity. */
    static DedicatedSession open(Source source, Dialect dialect) throws SQLException {
        Connection c = source.open();
        try {
            boolean off = !c.getAutoCommit();
            if (off) {
                c.setAutoCommit(true);
            }
            return new DedicatedSession(c, dialect, off, sessionId(c, dialect));
        } catch (SQLException | RuntimeException e) {
            discard(c);
            throw e;
        }
    }

    private static long sessionId(Connection c, Dialect dialect) throws SQLException {
        try (Statement st = c.createStatement();
                ResultSet rs = st.executeQuery("SELECT " + dialect.sessionIdSql())) {
            rs.next();
            return rs.getLong(1);
        }
    }

    Connection connection() {
        return connection;
    }

    /** The database's id of the session that was opened. */
    long id() {
        return id;
    }

    /**
     * One round trip proving that the session opened is alive and is still the one behind the connection.
     *
     * @throws SQLException when it does not answer
     */
    boolean isSameSession() throws SQLException {
        return sessionId(connection, dialect) == id;
    }

    /** Runs the cleanup, restores the pool's auto-commit setting and closes; discards on any failure. */
    void release(String cleanup) {
        try {
            try (Statement st = connection.createStatement()) {
                st.execute(cleanup);
            }
            if (autoCommitWasOff) {
                connection.setAutoCommit(false);
            }
            connection.close();
        } catch (SQLException | RuntimeException e) {
            discard(connection);
        }
    }

    /** Ends the database session without returning the connection to a pool in a usable state. */
    void discard() {
        discard(connection);
    }

    /**
     * Stops an executor (the one thread that uses a session, or the backend's pool): lets it finish its
     * queue for up to {@code waitMillis}, then interrupts it. A caller with a session gives it back when the
     * thread ended, else discards it.
     */
    static void stopThread(ExecutorService thread, long waitMillis) {
        thread.shutdown();
        try {
            if (!thread.awaitTermination(waitMillis, TimeUnit.MILLISECONDS)) {
                thread.shutdownNow();
            }
        } catch (InterruptedException e) {
            thread.shutdownNow();
            Thread.currentThread().interrupt();
        }
    }

    /** Ends the session behind any borrowed connection and closes it, so that a pool evicts it. */
    static void discard(Connection c) {
        try {
            c.abort(Runnable::run);
        } catch (SQLException | RuntimeException e) {
            // Not supported or already closed; closing below ends the session of a plain connection.
        }
        try {
            c.close();
        } catch (SQLException | RuntimeException e) {
            // Aborted: a pool evicts a connection that fails like this.
        }
    }
}
