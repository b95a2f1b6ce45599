package dev.dlock.internal.lease;

import dev.dlock.spi.LockKey;
import java.util.concurrent.CompletableFuture;

/**
 * How a hold ends, as far as a lease needs to know: the one way up out of this package. A lease cannot
 * tell whether its hold should pass to another caller of this client or go back to the store, nor who
 * waits for it: the part that queues the waiters implements this and is handed to every lease ({@link
 * LeaseParts}).
 */
public interface HoldRoute {
    /**
     * Ends a lease's hold: passes it to the next local waiter when the rules allow, else gives it back
     * to the store.
     *
     * @param lease the lease its holder lets go
     * @return completes with true once passed or released, false if the store no longer held it; null if
     *     the lease was not held
     */
    CompletableFuture<Boolean> release(LeaseImpl lease);

    /**
     * A hold of this key was lost: callers of this client waiting for it may try again.
     *
     * @param key the resource and mode
     */
    void ended(LockKey key);
}
