package dev.dlock.spi;

/**
 * What the store answered to one {@link AcquireRequest}: granted with a fencing token, or busy.
 *
 * <p>Use {@link #granted(long)} and {@link #busy(long)}.
 */
public final class AcquireResult {
    private static final AcquireResult BUSY_UNKNOWN = new AcquireResult(false, 0, -1, false);

    private final boolean granted;
    private final long token;
    private final long retryAfterMillis;
    private final boolean heldBack;

    private AcquireResult(boolean granted, long token, long retryAfterMillis, boolean heldBack) {
        this.granted = granted;
        this.token = token;
        this.retryAfterMillis = retryAfterMillis;
        this.heldBack = heldBack;
    }

    /**
     * The resource is now held by the requesting owner.
     *
     * @param token the fencing token, made in the same atomic step that granted: strictly greater than
     *     every token handed out before for this namespace, kind and name
     * @return a granted result
     */
    public static AcquireResult granted(long token) {
        return new AcquireResult(true, token, 0, false);
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
        return retryAfterMillis < 0 ? BUSY_UNKNOWN : new AcquireResult(false, 0, retryAfterMillis, false);
    }

    /**
     * Not granted because the store holds every grant back after it may have lost state (a restart
     * without persistence, a failover): a lease it forgot may still be running, so nobody is granted
     * until it has run out. A busy answer to the engine, which also tells the client's listener and names
     * the hold-back in a timeout.
     *
     * @param retryAfterMillis when the hold-back ends, by the store's clock; zero or more
     * @return a held-back result
     * @throws IllegalArgumentException if negative
     */
    public static AcquireResult heldBack(long retryAfterMillis) {
        if (retryAfterMillis < 0) {
            throw new IllegalArgumentException("a hold-back needs its end, got " + retryAfterMillis + " ms");
        }
        return new AcquireResult(false, 0, retryAfterMillis, true);
    }

    /**
     * Whether the store held the grant back after it may have lost state ({@link #heldBack}).
     *
     * @return true for a held-back answer
     */
    public boolean isHeldBack() {
        return heldBack;
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
        return granted ? "granted(" + token + ")" : (heldBack ? "heldBack(" : "busy(") + retryAfterMillis + "ms)";
    }
}
