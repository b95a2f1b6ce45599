package dev.dlock.jdbc;

import dev.dlock.LockBackendException;
import dev.dlock.LockInfo;
import dev.dlock.spi.AcquireRequest;
import dev.dlock.spi.AcquireResult;
import dev.dlock.spi.BackendContext;
import dev.dlock.spi.LockBackend;
import dev.dlock.spi.LockKey;
import dev.dlock.spi.Mode;
import dev.dlock.spi.RenewRequest;
import dev.dlock.spi.WakeListener;
import java.sql.Connection;
import java.sql.SQLException;
import java.sql.SQLTransientConnectionException;
import java.util.List;
import java.util.Set;
import java.util.concurrent.ArrayBlockingQueue;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.CompletionStage;
import java.util.concurrent.RejectedExecutionException;
import java.util.concurrent.ThreadPoolExecutor;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.atomic.AtomicInteger;
import javax.sql.DataSource;

/**
 * The JDBC lock backend: runs {@link LeaseTable} calls on its own small thread pool and answers the
 * engine with futures; wakes waiters through {@link PgNotifier} on PostgreSQL and through retry hints
 * elsewhere (one {@link Backoff} per backend, shared with the advisory flavour); optionally takes
 * exclusive locks as advisory locks ({@link AdvisoryLocks}).
 *
 * <p>Concurrency: blocking JDBC calls never run on the engine's threads. Each call borrows one
 * connection from the data source for its duration on one of {@code threads} daemon threads
 * ({@code dlock-jdbc-N-i}); the queue in front of them is bounded and a full queue fails the call at once.
 * The call runs with auto-commit on whatever the pool's setting ({@link Transactions#autoCommitted}), and
 * the connection goes back as it came.
 *
 * <p>Database clock: each renewal of lease rows reads the database's clock right after its statements, on
 * the same connection ({@link LeaseTable#nowMicros}), and reports it to the engine ({@link
 * BackendContext.BackendEvents#storeClock}) with the database URL (without its options) as the source, so
 * that a clock stepped forward, which expires rows early, cuts the client's leases. One more round trip per
 * renewal tick; advisory holds are not counted on the database's clock and report nothing.
 *
 * <p>Failure modes: the engine fails every call at the operation timeout (this class keeps no second
 * deadline). Deadlocks, lock-wait timeouts and broken connections (SQLState class 08, PostgreSQL 57P01 to
 * 57P03, MySQL 1205/1213) are retried on a fresh connection, up to {@link #ATTEMPTS} attempts; anything
 * else fails the call with {@link LockBackendException}. Each attempt is bounded by the pool's connection
 * timeout and the driver's socket timeout (both set from the operation timeout for URIs).
 * Retrying is safe: an acquire whose first attempt committed is granted again to the same owner with a
 * new token. A pool that cannot hand out a connection in time fails the call.
 */
final class JdbcBackend implements LockBackend {
    private static final AtomicInteger BACKENDS = new AtomicInteger();

    private final DataSource dataSource;
    private final AutoCloseable ownedPool;
    private final LeaseTable table;
    private final long timeoutNanos;
    /** The database's clock as a source of readings: its URL without options. */
    private final String clockSource;

    private final BackendContext.BackendEvents events;
    private final ThreadPoolExecutor executor;
    private final PgNotifier notifier;
    private final AdvisoryLocks advisory;
    private final WakeBeacons beacons;
    private final WakeWatchers watchers;
    private final Backoff backoff = new Backoff();

    JdbcBackend(
            DataSource dataSource,
            AutoCloseable ownedPool,
            LeaseTable table,
            String clockSource,
            BackendContext context,
            int threads,
            DedicatedSession.Source dedicated,
            boolean advisory) {
        this.dataSource = dataSource;
        this.ownedPool = ownedPool;
        this.table = table;
        this.timeoutNanos = context.operationTimeout().toNanos();
        this.clockSource = clockSource;
        this.events = context.events();
        int id = BACKENDS.incrementAndGet();
        AtomicInteger n = new AtomicInteger();
        this.executor =
                new ThreadPoolExecutor(threads, threads, 30, TimeUnit.SECONDS, new ArrayBlockingQueue<>(4096), r -> {
                    Thread t = new Thread(r, "dlock-jdbc-" + id + "-" + n.incrementAndGet());
                    t.setDaemon(true);
                    return t;
                });
        executor.allowCoreThreadTimeOut(true);
        this.notifier = table.dialect().notifies()
                ? new PgNotifier(
                        dedicated,
                        "dlock-pg-listen-" + id,
                        context.operationTimeout().toMillis())
                : null;
        this.advisory = advisory ? new AdvisoryLocks(table, dedicated, "dlock-advisory-" + id, backoff) : null;
        boolean wakeLocks = table.dialect().hasWakeLocks();
        this.beacons = wakeLocks ? new WakeBeacons(dedicated, table.prefix(), "dlock-wake-beacon-" + id) : null;
        this.watchers = wakeLocks ? new WakeWatchers(dedicated, table.prefix(), "dlock-wake-watch-" + id) : null;
    }

    interface SqlCall<T> {
        T run(Connection c) throws SQLException;
    }

    /** Longest run of attempts of one call that fail transiently (a deadlock, a broken connection). */
    static final int ATTEMPTS = 5;

    /**
     * Runs a call on the pool, retrying transient failures up to {@link #ATTEMPTS} times. There is no
     * deadline here: the engine fails every store call at the operation timeout, and each attempt is
     * bounded by the pool's connection timeout and the driver's socket timeout.
     */
    private <T> CompletableFuture<T> submit(String what, SqlCall<T> call) {
        try {
            return CompletableFuture.supplyAsync(() -> runWithRetry(what, call), executor);
        } catch (RejectedExecutionException e) {
            return CompletableFuture.failedFuture(
                    new LockBackendException(what + ": the JDBC backend is closed or overloaded", e));
        }
    }

    private <T> T runWithRetry(String what, SqlCall<T> call) {
        for (int attempt = 1; ; attempt++) {
            try (Connection c = dataSource.getConnection()) {
                return Transactions.autoCommitted(c, () -> call.run(c));
            } catch (SQLException e) {
                if (attempt >= ATTEMPTS || !isTransient(e)) {
                    throw new LockBackendException(what + " failed: " + e.getMessage(), e);
                }
                try {
                    Thread.sleep(5L * attempt);
                } catch (InterruptedException interrupted) {
                    Thread.currentThread().interrupt();
                    throw new LockBackendException(what + " was interrupted", e);
                }
            }
        }
    }

    /** Failures after which the same call may succeed on a fresh connection or a second try. */
    static boolean isTransient(SQLException e) {
        if (e instanceof SQLTransientConnectionException) {
            return false; // the pool already waited for a connection
        }
        String state = e.getSQLState() == null ? "" : e.getSQLState();
        int code = e.getErrorCode();
        return isBrokenConnection(e)
                || state.equals("40001")
                || state.equals("40P01")
                || state.equals("HYT00") // H2 lock timeout
                || code == 1205 // MySQL lock wait timeout
                || code == 1213 // MySQL deadlock
                || code == 50200; // H2 lock timeout
    }

    /** The connection is unusable: the pool must drop it, and a new one may work. */
    static boolean isBrokenConnection(SQLException e) {
        String state = e.getSQLState() == null ? "" : e.getSQLState();
        int code = e.getErrorCode();
        return state.startsWith("08")
                || state.equals("57P01") // PostgreSQL: terminated by administrator
                || state.equals("57P02")
                || state.equals("57P03")
                || state.equals("25P03") // PostgreSQL: ended by idle_in_transaction_session_timeout
                || code == 90067 // H2: connection broken
                || code == 90121 // H2: database closed
                || code == 1927; // MariaDB: connection killed
    }

    @Override
    public CompletionStage<AcquireResult> acquire(AcquireRequest request) {
        if (advisory != null && request.key().mode() == Mode.EXCLUSIVE) {
            return advisory.acquire(request);
        }
        return submit("acquire '" + request.key().name() + "'", c -> table.acquire(c, request))
                .thenApply(result -> hint(request, result));
    }

    /**
     * Without push wake-ups, a busy answer's retry hint is the back-off's; with an armed wake-lock
     * watcher ({@link WakeWatchers}), the release wakes the waiter and the hint is only a safety net.
     */
    private AcquireResult hint(AcquireRequest request, AcquireResult result) {
        if (notifier != null) {
            return result;
        }
        String owner = request.owner();
        if (result.isGranted()) {
            boolean waited = backoff.forget(owner);
            // A wake lock only where there is contention: a grant after busy answers, or of a resource
            // this client's waiters watch. An uncontended acquire and release stay one statement each.
            if (beacons != null && (waited || watchers.watching(request.key()))) {
                beacons.granted(request.key(), owner);
            }
            return result;
        }
        long remaining = result.retryAfterMillis();
        long backoffHint = backoff.next(owner, remaining);
        if (watchers != null && watchers.armed(request.key())) {
            return AcquireResult.busy(
                    remaining >= 0
                            ? Math.min(remaining, WakeWatchers.ARMED_HINT_MILLIS)
                            : WakeWatchers.ARMED_HINT_MILLIS);
        }
        return AcquireResult.busy(backoffHint);
    }

    @Override
    public CompletionStage<Boolean> release(LockKey key, String owner) {
        if (advisory != null && key.mode() == Mode.EXCLUSIVE) {
            return advisory.release(key, owner);
        }
        CompletableFuture<Boolean> released = submit("release '" + key.name() + "'", c -> table.release(c, key, owner));
        if (beacons != null) {
            // After the table's release commits, so that woken waiters find the resource free.
            released.whenComplete((ok, error) -> beacons.ended(owner));
        }
        return released;
    }

    /** Renews lease rows, then reads the database's clock and reports it; returns the owners not held. */
    private Set<String> renewRows(Connection c, List<RenewRequest> batch) throws SQLException {
        Set<String> lost = table.renew(c, batch);
        long sent = System.nanoTime();
        long micros = table.nowMicros(c);
        events.storeClock(clockSource, micros, sent, System.nanoTime());
        return lost;
    }

    @Override
    public CompletionStage<Set<String>> renew(List<RenewRequest> batch) {
        if (advisory != null) {
            List<RenewRequest> held =
                    batch.stream().filter(r -> r.key().mode() == Mode.EXCLUSIVE).toList();
            List<RenewRequest> rest =
                    batch.stream().filter(r -> r.key().mode() != Mode.EXCLUSIVE).toList();
            if (!held.isEmpty()) {
                CompletableFuture<Set<String>> tableLost = rest.isEmpty()
                        ? CompletableFuture.completedFuture(Set.of())
                        : submit("renew " + rest.size() + " leases", c -> renewRows(c, rest));
                return advisory.renew(held).thenCombine(tableLost, (a, b) -> {
                    Set<String> all = new java.util.HashSet<>(a);
                    all.addAll(b);
                    return all;
                });
            }
        }
        CompletableFuture<Set<String>> renewed = submit("renew " + batch.size() + " leases", c -> renewRows(c, batch));
        if (beacons != null) {
            renewed.thenAccept(lost -> lost.forEach(beacons::ended));
        }
        return renewed;
    }

    /**
     * A read of the lease row (an advisory hold: as its renewal, which writes nothing either): a renewal
     * commits, and a commit waits for the database's log to reach the disk.
     */
    @Override
    public CompletionStage<Boolean> holds(RenewRequest lease) {
        if (advisory != null && lease.key().mode() == Mode.EXCLUSIVE) {
            return advisory.renew(List.of(lease)).thenApply(lost -> !lost.contains(lease.owner()));
        }
        return submit("confirm '" + lease.key().name() + "'", c -> table.holds(c, lease));
    }

    @Override
    public CompletionStage<Void> cancelWait(LockKey key, String owner) {
        backoff.forget(owner);
        if (!key.mode().queuesWhileWaiting()) {
            return CompletableFuture.completedFuture(null);
        }
        return submit("leave the queue of '" + key.name() + "'", c -> {
            table.cancelWait(c, key, owner);
            return null;
        });
    }

    @Override
    public CompletionStage<Subscription> subscribe(LockKey key, WakeListener listener) {
        if (watchers != null && (advisory == null || key.mode() != Mode.EXCLUSIVE)) {
            return watchers.subscribe(key, listener);
        }
        if (notifier == null) {
            // No push from the database: waiters retry at the hints of their busy answers.
            return CompletableFuture.completedFuture(() -> {});
        }
        return notifier.subscribe(table.channel(key), listener);
    }

    /**
     * Every grant, in either flavour and every database, steps the resource's token by {@link
     * Tables#TOKEN_BLOCK} at least ({@link Tables#nextToken}), so the engine may pass a hold within this
     * client with the tokens in between.
     */
    @Override
    public long tokenBlock() {
        return Tables.TOKEN_BLOCK;
    }

    @Override
    public CompletionStage<LockInfo> describe(LockKey key) {
        return submit("describe '" + key.name() + "'", c -> table.describe(c, key));
    }

    @Override
    public CompletionStage<List<LockInfo>> list(String namespace, String prefix) {
        return submit("list", c -> table.list(c, namespace, prefix));
    }

    @Override
    public CompletionStage<Boolean> forceRelease(LockKey key) {
        return submit("force-release '" + key.name() + "'", c -> table.forceRelease(c, key));
    }

    @Override
    public void close() {
        long waitMillis = TimeUnit.NANOSECONDS.toMillis(timeoutNanos) + 1000;
        DedicatedSession.stopThread(executor, waitMillis);
        if (notifier != null) {
            notifier.close(waitMillis);
        }
        if (advisory != null) {
            advisory.close(waitMillis);
        }
        if (watchers != null) {
            watchers.close(waitMillis);
        }
        if (beacons != null) {
            beacons.close(waitMillis);
        }
        if (ownedPool != null) {
            try {
                ownedPool.close();
            } catch (Exception e) {
                throw new LockBackendException("closing the connection pool failed: " + e, e);
            }
        }
    }

    @Override
    public String toString() {
        return "JdbcBackend[" + table.dialect() + ", tables " + table.prefix() + "*"
                + (advisory != null ? ", advisory" : "") + "]";
    }
}
