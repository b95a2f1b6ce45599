package dev.dlock.internal.wait;

import dev.dlock.LockException;
import dev.dlock.LockTimeoutException;
import dev.dlock.internal.base.ListenerEvents;
import dev.dlock.internal.lease.LeaseImpl;
import dev.dlock.spi.LockKey;
import java.time.Duration;
import java.util.concurrent.CompletableFuture;
import java.util.function.BooleanSupplier;

/**
 * How one wait ends for those who look at it: the future its caller waits on, the client's listener event
 * (acquired or failed, with the time waited), and the wording of a timeout.
 *
 * <p>Design note: {@link Acquisition} decides when a wait ends (its state machine, under its lock, moves to
 * DONE once); this class only tells it, so every way out (grant, pass, failure, cancel by the caller) reports
 * one event and completes the future once. Nothing here blocks or calls the store.
 */
final class WaitOutcome {
    private final CompletableFuture<LeaseImpl> future = new CompletableFuture<>();
    private final ListenerEvents events;
    private final LockKey key;
    private final long waitNanos;
    private final long startNanos = System.nanoTime();

    /**
     * @param waitNanos how long the caller asked to wait, for the timeout's message
     */
    WaitOutcome(ListenerEvents events, LockKey key, long waitNanos) {
        this.events = events;
        this.key = key;
        this.waitNanos = waitNanos;
    }

    /** The caller's future: the lease, or the failure. */
    CompletableFuture<LeaseImpl> future() {
        return future;
    }

    /** When the wait began ({@link System#nanoTime()}). */
    long startNanos() {
        return startNanos;
    }

    /**
     * On a cancel by the caller: runs {@code abandon} (which ends the wait unless it had ended) and reports the
     * failure if it did.
     */
    void onCancel(BooleanSupplier abandon) {
        future.whenComplete((lease, error) -> {
            if (future.isCancelled() && abandon.getAsBoolean()) {
                events.failed(key.name(), System.nanoTime() - startNanos, error);
            }
        });
    }

    /**
     * Hands the lease to the caller.
     *
     * @return false if the caller cancelled meanwhile: the lease is then nobody's, and the caller of this
     *     releases it
     */
    boolean grant(LeaseImpl lease) {
        events.acquired(key.name(), System.nanoTime() - startNanos);
        return future.complete(lease);
    }

    /** Ends the wait with an error (timeout, store failure, client closed), reported to the listeners. */
    void fail(LockException cause) {
        events.failed(key.name(), System.nanoTime() - startNanos, cause);
        future.completeExceptionally(cause);
    }

    /** Ends a wait that never entered the local queue, unreported (nothing was waited for). */
    void reject(LockException cause) {
        future.completeExceptionally(cause);
    }

    /** The timeout of this wait, with an optional detail after the lock and the wait time. */
    LockTimeoutException timeout(String detail) {
        return new LockTimeoutException("could not acquire " + key.mode().name().toLowerCase() + " lock '" + key.name()
                + "' within " + Duration.ofNanos(waitNanos) + detail);
    }
}
