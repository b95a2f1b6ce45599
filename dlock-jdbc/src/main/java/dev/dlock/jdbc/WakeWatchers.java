package dev.dlock.jdbc;

import dev.dlock.spi.LockBackend.Subscription;
import dev.dlock.spi.LockKey;
import dev.dlock.spi.WakeListener;
import java.sql.PreparedStatement;
import java.sql.ResultSet;
import java.sql.SQLException;
import java.util.HashMap;
import java.util.HashSet;
import java.util.List;
import java.util.Map;
import java.util.Set;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.CopyOnWriteArrayList;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.atomic.AtomicBoolean;
import java.util.concurrent.locks.LockSupport;

/**
 * MySQL/MariaDB wake-ups, the waiter's side: for a resource this client waits for, a watcher thread
 * blocks in {@code GET_LOCK(wakeLockId, slice)} on a dedicated session while the holder's client holds
 * that wake lock ({@link WakeBeacons}). When the holder releases, the {@code GET_LOCK} returns, the
 * watcher lets go of the lock in the same statement and wakes the listeners, whose acquisitions retry.
 *
 * <p>Design: each round first asks whether the wake lock is held ({@code IS_USED_LOCK}); only then is
 * the watcher {@link #armed armed} and blocks. Armed means any release from now on wakes the listeners,
 * so the backend may answer a busy attempt with a long retry hint ({@link #ARMED_HINT_MILLIS}, the safety
 * net) instead of its back-off. When nobody holds the wake lock (a holder that has not raised it yet,
 * shared holders, a client of an older version), the watcher looks again after a pause doubling from
 * {@link #MIN_PAUSE_MILLIS} to {@link #MAX_PAUSE_MILLIS}, and waiters fall back to the back-off hints.
 *
 * <p>Connections: at most {@link #WATCHERS} watcher threads per backend (stopping ones included), each
 * with its own session, opened when a resource is first waited for and given back when nobody waits any
 * more (within one {@code GET_LOCK} slice); a client waiting
 * for more resources at once polls the others with back-off, as without watchers. The {@code GET_LOCK}
 * slice ({@link #SLICE_SECONDS}) bounds how long a watcher takes to notice that it should stop.
 *
 * <p>Failure modes: a failing session is discarded and reopened after a pause; meanwhile the watcher is
 * not armed, so waiters poll. On close, sessions go back after {@code RELEASE_ALL_LOCKS()}, or are
 * discarded when their thread is stuck.
 */
final class WakeWatchers {
    static final int WATCHERS = 2;
    static final double SLICE_SECONDS = 0.5;
    static final long ARMED_HINT_MILLIS = 1000;
    static final long MIN_PAUSE_MILLIS = 5;
    static final long MAX_PAUSE_MILLIS = 200;

    private final DedicatedSession.Source source;
    private final String prefix;
    private final String threadName;
    private final Map<String, Watch> watches = new HashMap<>(); // watched ids, under this
    private final Set<Watch> running = new HashSet<>(); // watchers whose thread has not ended, under this
    private boolean closed; // under this

    WakeWatchers(DedicatedSession.Source source, String prefix, String threadName) {
        this.source = source;
        this.prefix = prefix;
        this.threadName = threadName;
    }

    /** One watched wake lock: its listeners, its thread and session. */
    private final class Watch implements Runnable {
        final String id;
        final List<WakeListener> listeners = new CopyOnWriteArrayList<>();
        final Thread thread;
        volatile boolean armed;
        volatile boolean stopped;
        volatile DedicatedSession session;

        Watch(String id) {
            this.id = id;
            this.thread = new Thread(this, threadName);
            thread.setDaemon(true);
        }

        @Override
        public void run() {
            long pause = MIN_PAUSE_MILLIS;
            while (!stopped) {
                try {
                    if (session == null) {
                        session = DedicatedSession.open(source, Dialect.MYSQL);
                    }
                    if (query("SELECT IS_USED_LOCK(?) IS NOT NULL") != 1) {
                        armed = false;
                        sleep(pause);
                        pause = Math.min(MAX_PAUSE_MILLIS, pause * 2);
                        continue;
                    }
                    pause = MIN_PAUSE_MILLIS;
                    armed = true;
                    // Held by a holder: wait for its release, and let go of the lock at once.
                    if (query("SELECT GET_LOCK(?, " + SLICE_SECONDS + "), RELEASE_LOCK(?)") == 1) {
                        armed = false;
                        listeners.forEach(l -> l.wake(null));
                    }
                } catch (SQLException | RuntimeException e) {
                    armed = false;
                    DedicatedSession failed = session;
                    session = null;
                    if (failed != null) {
                        failed.discard();
                    }
                    sleep(pause);
                    pause = Math.min(MAX_PAUSE_MILLIS, pause * 2);
                }
            }
            armed = false;
            DedicatedSession last = session;
            session = null;
            if (last != null) {
                last.release("SELECT RELEASE_ALL_LOCKS()");
            }
            synchronized (WakeWatchers.this) {
                running.remove(this);
            }
        }

        private int query(String sql) throws SQLException {
            try (PreparedStatement ps = session.connection().prepareStatement(sql)) {
                ps.setString(1, id);
                if (sql.indexOf('?') != sql.lastIndexOf('?')) {
                    ps.setString(2, id);
                }
                try (ResultSet rs = ps.executeQuery()) {
                    rs.next();
                    return rs.getInt(1);
                }
            }
        }

        private void sleep(long millis) {
            long until = System.nanoTime() + TimeUnit.MILLISECONDS.toNanos(millis);
            long left;
            while (!stopped && (left = until - System.nanoTime()) > 0) {
                LockSupport.parkNanos(this, left);
            }
        }

        void stop() {
            stopped = true;
            LockSupport.unpark(thread);
        }
    }

    /**
     * Starts watching a resource for a listener; the subscription is live at once (while the watcher is
     * not armed, waiters poll at their back-off hints, so nothing is missed). Beyond {@link #WATCHERS}
     * resources nothing is watched.
     */
    CompletableFuture<Subscription> subscribe(LockKey key, WakeListener listener) {
        String id = WakeBeacons.wakeLockId(prefix, key);
        Watch watch;
        synchronized (this) {
            watch = watches.get(id);
            if (watch == null) {
                if (closed || running.size() >= WATCHERS) {
                    return CompletableFuture.completedFuture(() -> {});
                }
                watch = new Watch(id);
                watches.put(id, watch);
                running.add(watch);
                watch.thread.start();
            }
            watch.listeners.add(listener);
        }
        Watch subscribed = watch;
        AtomicBoolean cancelled = new AtomicBoolean();
        return CompletableFuture.completedFuture(() -> {
            if (cancelled.compareAndSet(false, true)) {
                synchronized (this) {
                    subscribed.listeners.remove(listener);
                    if (subscribed.listeners.isEmpty() && watches.get(id) == subscribed) {
                        watches.remove(id);
                        subscribed.stop();
                    }
                }
            }
        });
    }

    /** Whether a release of the resource's hold will wake this client's waiters (see the class note). */
    boolean armed(LockKey key) {
        Watch watch = watch(key);
        return watch != null && watch.armed;
    }

    /** Whether some waiter of this client watches the resource. */
    boolean watching(LockKey key) {
        return watch(key) != null;
    }

    private synchronized Watch watch(LockKey key) {
        return watches.get(WakeBeacons.wakeLockId(prefix, key));
    }

    /** Stops every watcher, waiting up to {@code waitMillis}; stuck sessions are discarded. */
    void close(long waitMillis) {
        List<Watch> all;
        synchronized (this) {
            closed = true;
            all = List.copyOf(running);
            watches.clear();
        }
        all.forEach(Watch::stop);
        long until = System.nanoTime() + TimeUnit.MILLISECONDS.toNanos(waitMillis);
        for (Watch w : all) {
            try {
                w.thread.join(Math.max(1, TimeUnit.NANOSECONDS.toMillis(until - System.nanoTime())));
            } catch (InterruptedException e) {
                Thread.currentThread().interrupt();
            }
            DedicatedSession stuck = w.session;
            if (w.thread.isAlive() && stuck != null) {
                w.session = null;
                stuck.discard();
            }
        }
    }
}
