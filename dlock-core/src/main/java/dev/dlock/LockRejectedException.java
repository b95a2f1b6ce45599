package dev.dlock;

/**
 * Load shedding: as many callers of this client already wait for the lock as the local queue limit
 * allows, so this one fails at once instead of joining them. Nothing is held.
 */
public class LockRejectedException extends LockException {
    private static final long serialVersionUID = 1L;

    /**
     * Creates an exception.
     *
     * @param message which lock, and the limit
     */
    public LockRejectedException(String message) {
        super(message);
    }
}
