package dev.dlock.internal.store;

import dev.dlock.LockException;

/**
 * A call that would create a hold, refused because the client is closing; it never reached the store
 * ({@link Store#acquire}). The waiter that sent it fails with "closed" rather than a store failure.
 */
public final class NotSent extends LockException {
    private static final long serialVersionUID = 1L;

    NotSent(String what) {
        super(what + ": the LockClient is closed");
    }
}
