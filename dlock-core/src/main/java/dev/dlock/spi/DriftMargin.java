package dev.dlock.spi;

import java.time.Duration;
import java.util.concurrent.TimeUnit;

/**
 * The one allowance for clock drift between a client and its store: 1% of the lease time plus 2 ms.
 *
 * <p>The engine ends a lease at a local deadline this margin before the lease time counted from when the
 * confirming request was sent, so a client whose clock runs up to 1% fast (or whose timer fires a little
 * late) still stops believing it holds before the store lets the hold go. A backend that judges a grant or
 * keeps a session by the same rule (a Redlock quorum that arrives late, an etcd lease's local validity)
 * uses this so the client and its stores never disagree on the margin.
 */
public final class DriftMargin {
    /** The part of the lease time allowed for drift: one hundredth. */
    public static final long LEASE_FRACTION = 100;

    /** The fixed part of the margin, for timer resolution: 2 ms. */
    public static final long FIXED_MILLIS = 2;

    private DriftMargin() {}

    /**
     * The margin for a lease time.
     *
     * @param leaseMillis the lease time in milliseconds, not negative
     * @return {@code leaseMillis / 100 + 2} milliseconds, in nanoseconds
     */
    public static long nanos(long leaseMillis) {
        return TimeUnit.MILLISECONDS.toNanos(leaseMillis / LEASE_FRACTION + FIXED_MILLIS);
    }

    /**
     * The margin for a lease time.
     *
     * @param leaseTime the lease time, not negative
     * @return the margin, rounded as {@link #nanos(long)} rounds it
     */
    public static Duration of(Duration leaseTime) {
        return Duration.ofNanos(nanos(leaseTime.toMillis()));
    }
}
