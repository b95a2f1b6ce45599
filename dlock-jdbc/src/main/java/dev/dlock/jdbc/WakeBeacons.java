package dev.dlock.jdbc;

import dev.dlock.spi.LockKey;
import dev.dlock.spi.Mode;
import java.sql.PreparedStatement;
import java.sql.ResultSet;
import java.sql.SQLException;
import java.util.ArrayList;
import java.util.HashMap;
import java.util.HashSet;
import java.util.List;
import java.util.Map;
import java.util.Set;
import java.util.concurrent.ArrayBlockingQueue;
import java.util.concurrent.RejectedExecutionException;
import java.util.concurrent.ThreadPoolExecutor;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.atomic.AtomicBoolean;

/**
 * MySQL/MariaDB wake-ups, the holder's side: while this client holds a resource in the lease table (an
 * exclusive, fair or write hold), one dedicated session of the client holds the resource's wake lock,
 * {@code GET_LOCK(wakeLockId)}; releasing the hold releases it, which ends the {@code GET_LOCK} that the
 * waiters of other clients block in ({@link WakeWatchers}). The lease table stays the only truth: a wake
 * lock is a hint, and every way it can be wrong (not raised in time, dropped with its session, left up
 * after a forced release) costs a waiter at most its retry hint, never a grant.
 *
 * <p>Design: grants and releases only record what should be raised; one thread ({@code
 * dlock-wake-beacon-N}) reconciles the session with that record, releases first (they wake waiters),
 * then raises. Raising waits at most {@link #RAISE_WAIT_SECONDS} (a watcher holds the lock for an instant
 * when it wakes); a raise that fails is not retried for that hold. Holds that come and go faster than the
 * thread cost no statement. One connection per backend, opened at the first grant.
 *
 * <p>Failure modes: a failing session is discarded (the database drops its wake locks, which wakes
 * waiters: they retry and find the table's answer) and reopened at the next reconciliation. On close, the
 * session releases every lock ({@code RELEASE_ALL_LOCKS()}) before it goes back to its pool, or is
 * discarded.
 */
final class WakeBeacons {
    /** Longest wait to raise a beacon, in seconds. */
    static final double RAISE_WAIT_SECONDS = 0.05;

    private final DedicatedSession.Source source;
    private final String prefix;
    private final ThreadPoolExecutor thread;
    private final AtomicBoolean planned = new AtomicBoolean();
    private final Map<String, String> holds = new HashMap<>(); // owner -> wake lock id, under this
    private final Set<String> tried = new HashSet<>(); // owners whose raise was attempted, under this
    private final Map<String, String> raised = new HashMap<>(); // wake lock id -> owner, on the thread
    private volatile DedicatedSession session; // on the thread; discarded by close if stuck

    WakeBeacons(DedicatedSession.Source source, String prefix, String threadName) {
        this.source = source;
        this.prefix = prefix;
        this.thread = new ThreadPoolExecutor(0, 1, 30, TimeUnit.SECONDS, new ArrayBlockingQueue<>(1), r -> {
            Thread t = new Thread(r, threadName);
            t.setDaemon(true);
            return t;
        });
    }

    /** The kinds of hold that one owner has alone, so that its release frees the resource for a waiter. */
    static boolean beaconed(Mode mode) {
        return mode == Mode.EXCLUSIVE || mode == Mode.FAIR || mode == Mode.WRITE;
    }

    /** The name of a resource's wake lock (all modes of its kind), at most 64 characters. */
    static String wakeLockId(String prefix, LockKey key) {
        String id = prefix + '\n' + key.namespace() + '\n' + key.kind().tag() + '\n' + key.name();
        return "dlock-wake:" + Tables.nameKey(id).substring(0, 52);
    }

    /** The store granted {@code owner} a hold. */
    void granted(LockKey key, String owner) {
        if (!beaconed(key.mode())) {
            return;
        }
        synchronized (this) {
            holds.put(owner, wakeLockId(prefix, key));
        }
        plan();
    }

    /** {@code owner} holds nothing any more (released, or reported lost). */
    void ended(String owner) {
        boolean had;
        synchronized (this) {
            had = holds.remove(owner) != null;
            tried.remove(owner);
        }
        if (had) {
            plan();
        }
    }

    private void plan() {
        if (planned.compareAndSet(false, true)) {
            try {
                thread.execute(this::reconcile);
            } catch (RejectedExecutionException closed) {
                planned.set(false);
            }
        }
    }

    private void reconcile() {
        planned.set(false);
        List<String> release = new ArrayList<>();
        Map<String, String> raise = new HashMap<>();
        synchronized (this) {
            raised.forEach((id, owner) -> {
                if (!id.equals(holds.get(owner))) {
                    release.add(id);
                }
            });
            holds.forEach((owner, id) -> {
                if (tried.add(owner) && !raised.containsKey(id)) {
                    raise.put(id, owner);
                }
            });
        }
        try {
            for (String id : release) {
                raised.remove(id);
                run("SELECT RELEASE_LOCK(?)", id);
            }
            for (Map.Entry<String, String> e : raise.entrySet()) {
                if (run("SELECT GET_LOCK(?, " + RAISE_WAIT_SECONDS + ")", e.getKey()) == 1) {
                    raised.put(e.getKey(), e.getValue());
                }
            }
        } catch (SQLException e) {
            // The session's wake locks are gone with it; waiters woken by that find the table's answer.
            raised.clear();
            DedicatedSession failed = session;
            session = null;
            if (failed != null) {
                failed.discard();
            }
        }
    }

    private int run(String sql, String id) throws SQLException {
        if (session == null) {
            session = DedicatedSession.open(source, Dialect.MYSQL);
        }
        try (PreparedStatement ps = session.connection().prepareStatement(sql)) {
            ps.setString(1, id);
            try (ResultSet rs = ps.executeQuery()) {
                rs.next();
                return rs.getInt(1);
            }
        }
    }

    /** Releases every wake lock and gives the session back, or discards it when the thread is stuck. */
    void close(long waitMillis) {
        DedicatedSession.stopThread(thread, waitMillis);
        DedicatedSession last = session;
        session = null;
        if (last != null) {
            if (thread.isTerminated()) {
                last.release("SELECT RELEASE_ALL_LOCKS()");
            } else {
                last.discard();
            }
        }
    }
}
