package dev.dlock;

/**
 * A lease is no longer held: it expired, a renewal was refused or failed past its deadline, or the
 * store's session ended. Work done under it must be treated as unprotected from that point on.
 */
public class LeaseLostException extends LockException {
    private static final long serialVersionUID = 1L;

    /**
     * Creates an exception.
     *
     * @param message which lease, and why it was lost
     */
    public LeaseLostException(String message) {
        super(message);
    }
}
