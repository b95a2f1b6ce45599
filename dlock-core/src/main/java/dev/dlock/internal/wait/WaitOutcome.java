package dev.dlock.internal.wait;

import dev.dlock.LockException;
import dev.dlock.LockTimeoutException;
import dev.dlock.internal.base.ListenerEvents;
import dev.dlock.internal.lease.LeaseImpl;
import dev.dlock.spi.LockKey;
import java.time.Duration;
import java.time.Instant;
import java.util.concurrent.CancellationException;
import java.util.concurrent.CompletableFuture;

/**
 * How one wait ends for those who look at it: the future its caller waits on, the client's listener event
 * (acquired or failed, with the time waited), and the wording of a timeout.
 *
 * <p>Design note: {@link Acquisition} decides when a wait ends (its state machine, {@link WaitState}, moves
 * to DONE once under its lock); this class only tells it, so every way out (grant, pass, failure, cancel by the
 * caller) reports one event and completes the future once. Nothing here blocks or calls the store. It is a
 * superclass rather than a field so that a wait stays one object on the acquire path (no extra allocation
 * per acquisition).
 */
abstract class WaitOutcome {
    private final CompletableFuture<LeaseImpl> future = new CallersFuture();
    private final ListenerEvents events;
    /** The resource and mode waited for. */
    final LockKey key;
    /** How long the caller asked to wait. */
    final long waitNanos;

    private final long startNanos;
    /** When the store's last hold-back of this wait ends (wall clock, for the message); 0 for none. */
    private volatile long heldBackUntilMillis;

    /**
     * @param waitNanos how long the caller asked to wait, for the timeout's message
     * @param startNanos now, on the client's clock
     */
    WaitOutcome(ListenerEvents events, LockKey key, long waitNanos, long startNanos) {
        this.events = events;
        this.key = key;
        this.waitNanos = waitNanos;
        this.startNanos = startNanos;
    }

    /** {@return now on the client's clock ({@code Store#nanoTime})} */
    abstract long nanoTime();

    /**
     * The caller's future, which ends the wait when the caller cancels it. An override rather than a
     * {@code whenComplete} reaction: that would cost two futures and a reaction object on every wait,
     * cancelled or not (issue 25). Only {@code cancel} is a caller's: the engine completes the future
     * with a {@link LockException} or a lease, never with a cancellation.
     */
    private final class CallersFuture extends CompletableFuture<LeaseImpl> {
        @Override
        public boolean cancel(boolean mayInterruptIfRunning) {
            boolean cancelled = super.cancel(mayInterruptIfRunning);
            if (cancelled && abandon()) {
                try {
                    join();
                } catch (CancellationException e) {
                    events.failed(key.name(), nanoTime() - startNanos, e);
                }
            }
            return cancelled;
        }
    }

    /**
     * Ends the wait unless it had ended (called when the caller cancelled the future).
     *
     * @return true if this call ended it
     */
    abstract boolean abandon();

    /** The caller's future: the lease, or the failure. */
    final CompletableFuture<LeaseImpl> future() {
        return future;
    }

    /** When the wait began ({@link #nanoTime()}). */
    final long startNanos() {
        return startNanos;
    }

    /**
     * Hands the lease to the caller.
     *
     * @return false if the caller cancelled meanwhile: the lease is then nobody's, and the caller of this
     *     releases it
     */
    final boolean completeGranted(LeaseImpl lease) {
        events.acquired(key.name(), nanoTime() - startNanos);
        return future.complete(lease);
    }

    /** Ends the wait with an error (timeout, store failure, client closed), reported to the listeners. */
    final void completeFailed(LockException cause) {
        events.failed(key.name(), nanoTime() - startNanos, cause);
        future.completeExceptionally(cause);
    }

    /** Ends a wait that never entered the local queue, unreported (nothing was waited for). */
    final void completeRejected(LockException cause) {
        future.completeExceptionally(cause);
    }

    /** The store held a grant back after it may have lost state ({@code AcquireResult.heldBack}). */
    final void heldBack(long leftMillis) {
        heldBackUntilMillis = System.currentTimeMillis() + leftMillis;
        events.heldBack(key.name(), leftMillis);
    }

    /** What a timeout says of a hold-back that kept this wait from a grant; empty if none did. */
    final String heldBackDetail() {
        long until = heldBackUntilMillis;
        return until == 0
                ? ""
                : " (the store held grants back until " + Instant.ofEpochMilli(until)
                        + ": it may have lost holds whose leases were still running)";
    }

    /** The timeout of this wait, with an optional detail after the lock and the wait time. */
    final LockTimeoutException timeout(String detail) {
        return new LockTimeoutException("could not acquire " + key.mode().name().toLowerCase() + " lock '" + key.name()
                + "' within " + Duration.ofNanos(waitNanos) + detail);
    }
}
