package dev.dlock.internal.view;

import dev.dlock.Lease;
import dev.dlock.LockTimeoutException;
import dev.dlock.internal.base.Waits;
import dev.dlock.internal.lease.HeldLease;
import dev.dlock.internal.lease.LeaseImpl;
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
    final ViewParts parts;

    LeaseView(ViewParts parts) {
        this.parts = parts;
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
        // A grant that arrived but was not handed over goes back at once (a multi-lease later, when closed).
        return Waits.publicFuture(p.result(), p.cancel(), lease -> {
            if (lease instanceof LeaseImpl granted) {
                granted.releaseAsync();
            }
        });
    }
}
