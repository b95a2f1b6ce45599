package dev.dlock;

import java.time.Duration;

/**
 * Receives events for metrics and logging. Events of one client are delivered in the order they
 * happened on one listener thread of that client, never on the renewal scheduler or a store client
 * thread, so a slow listener delays other events but never a renewal; if it falls 10,000 events behind,
 * newer events are dropped. Exceptions thrown by a listener are ignored. A Micrometer binding implements
 * this in dlock-micrometer ({@code MicrometerLockListener}). Every method has an empty default.
 */
public interface LockListener {
    /**
     * A lock or permit was granted by the store (not counted for reentrant acquisitions).
     *
     * @param name the lock name
     * @param waited time from the call to the grant
     */
    default void acquired(String name, Duration waited) {}

    /**
     * A wait ended without the lock: timeout, store failure, cancellation or interrupt.
     *
     * @param name the lock name
     * @param waited time from the call to giving up
     * @param cause the exception the caller saw
     */
    default void failed(String name, Duration waited, Throwable cause) {}

    /**
     * A caller of this client joined the local queue of a name: it waits for the lock, the first in the
     * queue by asking the store. Every call is matched by one {@link #dequeued} call, so a listener can
     * keep the queue length as a counter.
     *
     * @param name the lock name
     */
    default void queued(String name) {}

    /**
     * A caller left the local queue of a name: granted, failed, timed out or cancelled.
     *
     * @param name the lock name
     */
    default void dequeued(String name) {}

    /**
     * A caller was turned away because the local queue was full.
     *
     * @param name the lock name
     */
    default void rejected(String name) {}

    /**
     * A held lease was released normally.
     *
     * @param name the lock name
     * @param held time from grant to release
     */
    default void released(String name, Duration held) {}

    /**
     * A renewal round trip finished.
     *
     * @param leases how many leases were in the batch
     * @param lost how many of them the store no longer held
     */
    default void renewed(int leases, int lost) {}

    /**
     * A lease was lost.
     *
     * @param name the lock name
     * @param reason why
     */
    default void lost(String name, String reason) {}

    /**
     * The store held a grant of this lock back: it may have lost state (a restart without persistence, a
     * failover) while a lease it forgot may still be running, so it grants nothing until then. Waiters
     * wait on; {@code tryLock()} answers false. Told for every such answer.
     *
     * @param name the lock name
     * @param left how long the hold-back lasts from the store's answer
     */
    default void heldBack(String name, Duration left) {}
}
