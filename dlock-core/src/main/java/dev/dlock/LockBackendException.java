package dev.dlock;

/**
 * The store could not be reached or failed, or did not answer within the operation timeout. Thrown
 * within that timeout, never after an unbounded hang.
 */
public class LockBackendException extends LockException {
    private static final long serialVersionUID = 1L;

    /**
     * Creates an exception.
     *
     * @param message what failed
     */
    public LockBackendException(String message) {
        super(message);
    }

    /**
     * Creates an exception with a cause.
     *
     * @param message what failed
     * @param cause the store client's exception
     */
    public LockBackendException(String message, Throwable cause) {
        super(message, cause);
    }
}
