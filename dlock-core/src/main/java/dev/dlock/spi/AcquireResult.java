package dev.dlock.spi;

/**
 * What the store answered to one {@link AcquireRequest}: granted with a fencing token, or busy.
 *
 * <p>Use {@link #granted(long)} and {@link #busy(long)}.
 */
public final class AcquireResult {
    private static final AcquireResult BUSY_UNKNOWN = new AcquireResult(false, 0, -1);

    private final boolean granted;
    private final long token;
    private final long retryAfterMillis;

    private AcquireResult(boolean granted, long token, long retryAfterMillis) {
        this.granted = granted;
        this.token = token;
        this.retryAfterMillis = retryAfterMillis;
    }

    /**
     * The resource is now held by the requesting owner.
     *
     * @param token the fencing token, made in the same atomic step that granted: strictly greater than
     *     every token handed out before for this namespace, kind and name
     * @return a granted result
     */
    public static AcquireResult granted(long token) {
        return new AcquireResult(true, token, 0);
    }

    /**
     * The resource is held by someone else (or the caller is not first in line).
     *
     * @param retryAfterMillis when the first hold or queue entry that blocks the caller expires at the
     *     latest, by the store's clock, or a negative number when the store cannot tell; the engine
     *     retries no later than this (or after one lease time when unknown) even if no wake-up arrives
     * @return a busy result
     */
    public static AcquireResult busy(long retryAfterMillis) {
        return retryAfterMillis < 0 ? BUSY_UNKNOWN : new AcquireResult(false, 0, retryAfterMillis);
    }

    /**
     * Whether the store granted the resource.
     *
     * @return true when granted
     */
    public boolean isGranted() {
        return granted;
    }

    /**
     * The fencing token of a grant.
     *
     * @return the token; meaningless when not granted
     */
    public long token() {
        return token;
    }

    /**
     * For a busy result, the longest the engine should wait before asking again.
     *
     * @return milliseconds, or a negative number when unknown
     */
    public long retryAfterMillis() {
        return retryAfterMillis;
    }

    @Override
    public String toString() {
        return granted ? "granted(" + token + ")" : "busy(" + retryAfterMillis + "ms)";
    }
}
