package dev.dlock.internal;

import dev.dlock.Lease;
import dev.dlock.LockTimeoutException;
import java.time.Duration;
import java.util.Optional;
import java.util.concurrent.CompletableFuture;

/**
 * The lease API every view shares (locks, read and write locks, multi-locks, semaphores): blocking,
 * trying and asynchronous acquisition on top of one {@link #begin} that starts an acquisition. What
 * differs between views is only how they begin; the thread-owned {@code Lock} view is added by {@link
 * ThreadOwnedLock}, which semaphores do not have.
 */
abstract class LeaseView {
    final Engine engine;

    LeaseView(Engine engine) {
        this.engine = engine;
    }

    /** An acquisition in progress: its result and how to cancel it. */
    record Pending(CompletableFuture<? extends HeldLease> result, Runnable cancel) {}

    /**
     * Starts acquiring.
     *
     * @param wait the longest wait
     * @param lockView true when called for the thread-owned view (read-write rules apply)
     */
    abstract Pending begin(Duration wait, boolean lockView);

    /** Like {@code DistributedLock.acquire(Duration)}. */
    public Lease acquire(Duration wait) {
        Pending p = begin(wait, false);
        return Waits.awaitOrCancelOnInterrupt(p.result(), p.cancel());
    }

    /** Like {@code DistributedLock.tryAcquire()}: one attempt, empty when busy. */
    public Optional<Lease> tryAcquire() {
        try {
            return Optional.of(acquire(Duration.ZERO));
        } catch (LockTimeoutException busy) {
            return Optional.empty();
        }
    }

    /** Like {@code DistributedLock.acquireAsync(Duration)}. */
    public CompletableFuture<Lease> acquireAsync(Duration wait) {
        Pending p = begin(wait, false);
        return Waits.publicFuture(p.result(), p.cancel());
    }
}
