package dev.dlock.internal;

import dev.dlock.Lease;
import dev.dlock.LeaseLostException;
import dev.dlock.spi.LockKey;
import dev.dlock.spi.RenewRequest;
import java.time.Duration;
import java.util.List;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.ForkJoinPool;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.atomic.AtomicInteger;

/**
 * One grant from the store.
 *
 * <p>Deadline: computed from {@code System.nanoTime()} taken before the grant or renewal request was
 * sent, plus the lease time, minus a drift margin of 1% + 2 ms, so the local deadline always falls before
 * the store's expiry. It never uses wall-clock time and never the arrival time of a reply.
 *
 * <p>Concurrency: the state moves once from HELD to RELEASED or LOST by compare-and-set; timing fields
 * are volatile and written only by the renewal path ({@link Watchdog}, {@link #extend}).
 *
 * <p>Lost signal: {@link #whenLost()} completes on the common pool, never on a store or scheduler thread.
 */
final class LeaseImpl implements HeldLease {
    private static final int HELD = 0;
    private static final int RELEASED = 1;
    private static final int LOST = 2;

    final Engine engine;
    final LockKey key;
    final String owner;
    final boolean renew;
    private final long token;
    private final long grantedNanos;
    private final AtomicInteger state = new AtomicInteger(HELD);
    private final CompletableFuture<LeaseLostException> lost = new CompletableFuture<>();
    private volatile long leaseMillis;
    private volatile long deadlineNanos;
    private volatile String lostReason;
    // Renewal bookkeeping, used by the watchdog only.
    volatile long nextRenewNanos;
    volatile boolean renewing;

    LeaseImpl(Engine engine, LockKey key, String owner, long token, long leaseMillis, boolean renew, long sentNanos) {
        this.engine = engine;
        this.key = key;
        this.owner = owner;
        this.token = token;
        this.renew = renew;
        this.grantedNanos = sentNanos;
        this.leaseMillis = leaseMillis;
        renewed(sentNanos);
    }

    static long driftNanos(long leaseMillis) {
        return TimeUnit.MILLISECONDS.toNanos(leaseMillis / 100 + 2);
    }

    long leaseNanos() {
        return TimeUnit.MILLISECONDS.toNanos(leaseMillis);
    }

    long deadlineNanos() {
        return deadlineNanos;
    }

    long leaseMillis() {
        return leaseMillis;
    }

    /** The store confirmed the lease with a request sent at {@code sentNanos}. */
    void renewed(long sentNanos) {
        long lease = leaseNanos();
        deadlineNanos = sentNanos + lease - driftNanos(leaseMillis);
        nextRenewNanos = sentNanos + lease / 3;
    }

    boolean isHeld() {
        return state.get() == HELD;
    }

    @Override
    public String name() {
        return key.name();
    }

    @Override
    public long fencingToken() {
        return token;
    }

    @Override
    public List<Lease> parts() {
        return List.of(this);
    }

    @Override
    public boolean isValid() {
        return state.get() == HELD && System.nanoTime() - deadlineNanos < 0 && engine.backend.leasesValid();
    }

    @Override
    public void checkValid() {
        if (isValid()) {
            return;
        }
        if (state.get() == RELEASED) {
            throw new LeaseLostException("lease on '" + key.name() + "' (token " + token + ") was released");
        }
        String reason = lostReason;
        if (reason == null) {
            reason = engine.backend.leasesValid() ? "its local deadline passed" : "the store session is not live";
        }
        throw lostException(reason);
    }

    private LeaseLostException lostException(String reason) {
        return new LeaseLostException("lease on '" + key.name() + "' (token " + token + ") was lost: " + reason);
    }

    @Override
    public Duration remaining() {
        long left = deadlineNanos - System.nanoTime();
        return state.get() == HELD && left > 0 ? Duration.ofNanos(left) : Duration.ZERO;
    }

    @Override
    public Duration heldFor() {
        return Duration.ofNanos(System.nanoTime() - grantedNanos);
    }

    @Override
    public void extend(Duration leaseTime) {
        long millis = Checks.leaseTime(leaseTime).toMillis();
        checkValid();
        long sent = System.nanoTime();
        var lostOwners = engine.join(engine.call(
                "extend '" + key.name() + "'",
                () -> engine.backend.renew(List.of(new RenewRequest(key, owner, millis)))));
        if (lostOwners.contains(owner)) {
            markLost("the store no longer held it when it was extended");
            throw lostException("the store no longer held it when it was extended");
        }
        leaseMillis = millis;
        renewed(sent);
        engine.watchdog.rescheduleFor(this);
    }

    @Override
    public CompletableFuture<LeaseLostException> whenLost() {
        return lost;
    }

    /** Declares the lease lost (renewal refused or failed past the deadline, session gone); idempotent. */
    void markLost(String reason) {
        if (!state.compareAndSet(HELD, LOST)) {
            return;
        }
        lostReason = reason;
        engine.watchdog.remove(this);
        engine.safely(() -> engine.listener().lost(key.name(), reason));
        LeaseLostException signal = lostException(reason);
        CompletableFuture.runAsync(() -> lost.complete(signal), ForkJoinPool.commonPool());
        engine.wake(key, null);
    }

    @Override
    public String lostReason() {
        return state.get() == LOST ? (lostReason != null ? lostReason : "lost") : null;
    }

    @Override
    public void close() {
        CompletableFuture<Boolean> release = releaseAsync();
        if (release != null) {
            engine.join(release);
        }
    }

    /**
     * Starts the release; null if the lease was not held. When the store says it no longer held the
     * lease, the lease counts as lost (its lost signal fires).
     */
    CompletableFuture<Boolean> releaseAsync() {
        if (!state.compareAndSet(HELD, RELEASED)) {
            return null;
        }
        engine.watchdog.remove(this);
        long held = System.nanoTime() - grantedNanos;
        return engine.call("release '" + key.name() + "'", () -> engine.backend.release(key, owner))
                .whenComplete((wasHeld, error) -> {
                    if (error == null && !wasHeld) {
                        lostReason = "the store no longer held it at release";
                        state.set(LOST);
                        engine.safely(() -> engine.listener().lost(key.name(), lostReason));
                        LeaseLostException signal = lostException(lostReason);
                        CompletableFuture.runAsync(() -> lost.complete(signal), ForkJoinPool.commonPool());
                    } else {
                        lost.cancel(false);
                        if (error == null) {
                            engine.safely(() -> engine.listener().released(key.name(), Duration.ofNanos(held)));
                        }
                    }
                    engine.wake(key, null);
                });
    }

    @Override
    public String toString() {
        return "Lease[" + key.name() + ", " + key.mode() + ", token=" + token + ", "
                + (state.get() == HELD
                        ? "held, " + remaining().toMillis() + "ms left"
                        : state.get() == LOST ? "lost" : "released")
                + "]";
    }
}
