package dev.dlock.jdbc;

import dev.dlock.LockBackendException;
import dev.dlock.spi.AcquireRequest;
import dev.dlock.spi.AcquireResult;
import dev.dlock.spi.LockKey;
import dev.dlock.spi.RenewRequest;
import java.sql.Connection;
import java.sql.SQLException;
import java.util.HashMap;
import java.util.HashSet;
import java.util.Iterator;
import java.util.List;
import java.util.Map;
import java.util.Set;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.RejectedExecutionException;
import java.util.concurrent.ScheduledFuture;
import java.util.concurrent.ScheduledThreadPoolExecutor;
import java.util.concurrent.TimeUnit;

/**
 * The advisory flavour of exclusive locks: {@code pg_try_advisory_lock} on PostgreSQL, {@code
 * GET_LOCK(name, 0)} on MySQL/MariaDB, held by one dedicated session per backend ({@link
 * DedicatedSession}). Fencing tokens still come from the lease table ({@link LeaseTable#nextToken}),
 * incremented right after the lock is taken on the same session, so they stay durable and increasing.
 *
 * <p>Semantics differ from the lease table: a hold lasts as long as the session, and as long as its
 * lease is renewed. A renewal proves that the very session that took the locks is alive: it compares
 * the session's id ({@code pg_backend_pid()}, {@code CONNECTION_ID()}) with the one recorded when the
 * session opened, so a driver that reconnects transparently cannot keep leases valid whose locks died
 * with the old session. When the session dies or changes (server restart, failover, {@code
 * pg_terminate_backend}, {@code KILL}, network), every advisory lease of the backend is reported lost at
 * the next renewal tick and the connection is discarded; the next call opens a new session. Advisory locks
 * live only on the server that granted them: they vanish on failover to a replica.
 *
 * <p>Holds expire here as lease rows do in the table: a hold not renewed within its lease time (renewal
 * off, or the client declared the lease lost after failed renewals) has its lock released, so a lost
 * lease does not keep the database lock until the client closes. The hold's expiry is counted from when
 * this class processed the grant or renewal, never earlier than the engine's own deadline for the lease,
 * which counts from when the request was sent.
 *
 * <p>The statements are the dialect's ({@link PortableSql#tryAdvisoryLock} and its neighbours); this
 * class never asks which database it talks to.
 *
 * <p>Concurrency: one thread ({@code dlock-advisory-N}) owns the session and runs every call and expiry
 * sweep in order. Advisory locks are re-entrant per session, so a map of lock id to hold keeps two
 * acquisitions of one client from both "winning" the same lock.
 *
 * <p>Failure modes: a failed call fails its future with {@link LockBackendException}; an acquire that
 * finds its session dead or replaced retries once on a new session. Between the session's death and the
 * next renewal tick (a third of the lease time) a lost advisory lease still looks valid locally. On close
 * the session releases every advisory lock before it goes back to its pool; if it cannot, or the thread is
 * stuck, it is discarded instead.
 */
final class AdvisoryLocks {
    private record Hold(String owner, LockKey key, long expiresAtNanos) {}

    private final LeaseTable table;
    private final PortableSql sql;
    private final DedicatedSession.Source source;
    private final ScheduledThreadPoolExecutor thread;
    private final Map<String, Hold> holds = new HashMap<>(); // only on the thread
    private long earliestExpiryNanos; // only on the thread; no later than any hold's expiry
    private ScheduledFuture<?> sweep; // only on the thread
    private long sweepAtNanos;
    private final Backoff backoff;
    private volatile DedicatedSession session; // used on the thread; discarded by close if stuck

    AdvisoryLocks(LeaseTable table, DedicatedSession.Source source, String threadName, Backoff backoff) {
        if (!table.sql().hasAdvisoryLocks()) {
            throw new IllegalArgumentException(
                    "the advisory flavour needs PostgreSQL or MySQL/MariaDB, not " + table.dialect());
        }
        this.table = table;
        this.sql = table.sql();
        this.source = source;
        this.backoff = backoff;
        this.thread = new ScheduledThreadPoolExecutor(1, r -> {
            Thread t = new Thread(r, threadName);
            t.setDaemon(true);
            return t;
        });
        thread.setRemoveOnCancelPolicy(true);
        thread.setExecuteExistingDelayedTasksAfterShutdownPolicy(false);
    }

    private interface SessionCall<T> {
        T run(DedicatedSession s) throws SQLException;
    }

    /** Thrown inside a call that found another session behind its connection. */
    private static final class SessionReplaced extends SQLException {
        SessionReplaced() {
            super("the advisory-lock session was replaced (the driver reconnected)", "08006");
        }
    }

    /**
     * Runs a call on the session's thread. With {@code retryOnNewSession}, a call that fails because the
     * session died or was replaced is run once more on a new session (safe for acquire: the dead session
     * held nothing that the new one could be mistaken for).
     */
    private <T> CompletableFuture<T> onSession(String what, SessionCall<T> call, boolean retryOnNewSession) {
        try {
            return CompletableFuture.supplyAsync(
                    () -> {
                        for (int attempt = 1; ; attempt++) {
                            try {
                                if (session == null) {
                                    session = DedicatedSession.open(source, table.dialect());
                                }
                                expire();
                                return call.run(session);
                            } catch (SQLException e) {
                                boolean broken = e instanceof SessionReplaced || sessionBroken();
                                if (broken) {
                                    dropSession();
                                }
                                if (!broken || !retryOnNewSession || attempt > 1) {
                                    throw new LockBackendException(what + " failed: " + e.getMessage(), e);
                                }
                            }
                        }
                    },
                    thread);
        } catch (RejectedExecutionException e) {
            return CompletableFuture.failedFuture(new LockBackendException(what + ": the backend is closed", e));
        }
    }

    private boolean sessionBroken() {
        try {
            return session != null && !session.connection().isValid(1);
        } catch (SQLException e) {
            return true;
        }
    }

    /** Forgets a dead or replaced session and its holds (lost at renewal); it never goes back to a pool. */
    private void dropSession() {
        holds.clear();
        DedicatedSession dead = session;
        session = null;
        if (dead != null) {
            dead.discard();
        }
    }

    CompletableFuture<AcquireResult> acquire(AcquireRequest request) {
        String id = sql.advisoryLockId(request.key());
        return onSession(
                "advisory acquire '" + request.key().name() + "'",
                s -> {
                    Connection c = s.connection();
                    Hold hold = holds.get(id);
                    if (hold != null) {
                        if (!hold.owner().equals(request.owner())) {
                            return AcquireResult.busy(backoff.next(request.owner(), -1));
                        }
                        // A retried attempt whose first grant went through: still ours if still this session.
                        if (!s.isSameSession()) {
                            throw new SessionReplaced();
                        }
                        return grant(c, id, request);
                    }
                    if (!tryLock(s, id)) {
                        return AcquireResult.busy(backoff.next(request.owner(), -1));
                    }
                    backoff.forget(request.owner());
                    try {
                        return grant(c, id, request);
                    } catch (SQLException e) {
                        holds.remove(id);
                        unlock(c, id, request.key());
                        throw e;
                    }
                },
                true);
    }

    private AcquireResult grant(Connection c, String id, AcquireRequest request) throws SQLException {
        long expires = System.nanoTime() + TimeUnit.MILLISECONDS.toNanos(request.leaseMillis());
        if (holds.isEmpty() || expires - earliestExpiryNanos < 0) {
            earliestExpiryNanos = expires;
        }
        holds.put(id, new Hold(request.owner(), request.key(), expires));
        long token = table.nextToken(c, request.key());
        sweepAt(expires);
        return AcquireResult.granted(token);
    }

    /** Takes the lock on this session; the same round trip checks that the session is still the same. */
    private boolean tryLock(DedicatedSession s, String id) throws SQLException {
        PortableSql.AdvisoryTry answer = sql.tryAdvisoryLock(s.connection(), id);
        if (answer.sessionId() != s.id()) {
            throw new SessionReplaced(); // the lock just taken dies with the discarded connection
        }
        return answer.taken();
    }

    /** Releases the lock (PostgreSQL wakes the waiters of other clients in the same statement). */
    private boolean unlock(Connection c, String id, LockKey key) throws SQLException {
        return sql.releaseAdvisoryLock(c, id, key);
    }

    CompletableFuture<Boolean> release(LockKey key, String owner) {
        String id = sql.advisoryLockId(key);
        return onSession(
                "advisory release '" + key.name() + "'",
                s -> {
                    Hold hold = holds.get(id);
                    if (hold == null || !hold.owner().equals(owner)) {
                        return false;
                    }
                    holds.remove(id);
                    return unlock(s.connection(), id, key);
                },
                false);
    }

    /** The session is the lease: one query per tick proves it is the same live session. */
    CompletableFuture<Set<String>> renew(List<RenewRequest> batch) {
        return onSession(
                "advisory renew",
                s -> {
                    Set<String> lost = new HashSet<>();
                    boolean same;
                    try {
                        same = s.isSameSession();
                    } catch (SQLException e) {
                        if (!sessionBroken()) {
                            throw e;
                        }
                        same = false;
                    }
                    if (!same) {
                        // The database dropped every advisory lock with the session.
                        dropSession();
                        batch.forEach(r -> lost.add(r.owner()));
                        return lost;
                    }
                    long now = System.nanoTime();
                    for (RenewRequest r : batch) {
                        String id = sql.advisoryLockId(r.key());
                        Hold hold = holds.get(id);
                        if (hold == null || !hold.owner().equals(r.owner())) {
                            lost.add(r.owner());
                            continue;
                        }
                        long expires = now + TimeUnit.MILLISECONDS.toNanos(r.leaseMillis());
                        holds.put(id, new Hold(hold.owner(), hold.key(), expires));
                        if (expires - earliestExpiryNanos < 0) {
                            // Cut short (an extend to less than was left): released at the new end. A
                            // later end needs nothing: the planned sweep finds it not due and plans again.
                            earliestExpiryNanos = expires;
                            sweepAt(expires);
                        }
                    }
                    return lost;
                },
                false);
    }

    /** Plans a sweep on the thread for {@code atNanos}, unless one is planned no later. */
    private void sweepAt(long atNanos) {
        if (sweep != null && !sweep.isDone() && atNanos - sweepAtNanos >= 0) {
            return;
        }
        try {
            sweep = thread.schedule(this::sweep, atNanos - System.nanoTime() + 1, TimeUnit.NANOSECONDS);
            sweepAtNanos = atNanos;
        } catch (RejectedExecutionException closed) {
            // Closing releases everything.
        }
    }

    private void sweep() {
        sweep = null;
        try {
            expire();
        } catch (SQLException e) {
            if (sessionBroken()) {
                dropSession();
            }
        }
        if (!holds.isEmpty()) {
            sweepAt(earliestExpiryNanos);
        }
    }

    /** Releases the locks of holds whose lease ran out without a renewal. */
    private void expire() throws SQLException {
        long now = System.nanoTime();
        if (holds.isEmpty() || now - earliestExpiryNanos <= 0) {
            return;
        }
        long earliest = Long.MAX_VALUE;
        boolean any = false;
        Iterator<Map.Entry<String, Hold>> it = holds.entrySet().iterator();
        while (it.hasNext()) {
            Map.Entry<String, Hold> e = it.next();
            long expires = e.getValue().expiresAtNanos();
            if (now - expires > 0) {
                it.remove();
                if (session != null) {
                    unlock(session.connection(), e.getKey(), e.getValue().key());
                }
            } else if (!any || expires - earliest < 0) {
                earliest = expires;
                any = true;
            }
        }
        earliestExpiryNanos = earliest;
    }

    /**
     * Gives the session back with no advisory lock held, or discards it; waits up to {@code waitMillis}
     * for calls in flight, then discards a session whose thread is stuck.
     */
    void close(long waitMillis) {
        try {
            thread.execute(() -> {
                DedicatedSession last = session;
                session = null;
                holds.clear();
                if (last != null) {
                    last.release(sql.releaseAllAdvisoryLocks());
                }
            });
        } catch (RejectedExecutionException alreadyClosed) {
            return;
        }
        DedicatedSession.stopThread(thread, waitMillis);
        DedicatedSession stuck = session;
        if (stuck != null) {
            session = null;
            stuck.discard();
        }
    }
}
