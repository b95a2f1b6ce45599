package dev.dlock;

/** The wait time passed before the lock could be had. Nothing is held. */
public class LockTimeoutException extends LockException {
    private static final long serialVersionUID = 1L;

    /**
     * Creates an exception.
     *
     * @param message which lock, and how long the caller waited
     */
    public LockTimeoutException(String message) {
        super(message);
    }
}
