package dev.dlock;

import java.time.Duration;

/**
 * Receives events for metrics and logging, from the threads the events happen on. Implementations
 * must return quickly and never throw; a Micrometer binding implements this in the Spring Boot starter.
 * Every method has an empty default.
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
}
