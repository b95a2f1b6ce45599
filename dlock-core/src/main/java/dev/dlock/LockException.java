package dev.dlock;

/** The base of every exception dlock throws for a lock that could not be had or kept. Unchecked. */
public class LockException extends RuntimeException {
    private static final long serialVersionUID = 1L;

    /**
     * Creates an exception.
     *
     * @param message what went wrong, naming the lock
     */
    public LockException(String message) {
        super(message);
    }

    /**
     * Creates an exception with a cause.
     *
     * @param message what went wrong, naming the lock
     * @param cause the underlying failure
     */
    public LockException(String message, Throwable cause) {
        super(message, cause);
    }
}
