package dev.dlock.redis;

import dev.dlock.spi.DriftMargin;
import java.time.Duration;
import java.util.List;
import java.util.Objects;
import java.util.concurrent.TimeUnit;

/**
 * The settings of the hold-back after a lost state: the longest lease the client declares, and whether
 * the client opted out.
 *
 * <p>Design: a Redis server that restarts without persistence (or from a file that misses the last writes,
 * or a replica promoted by a failover) forgets holds whose leases may still be valid by their holders'
 * clocks. Every grant therefore runs {@code epoch.lua}'s check in the same script: a per-namespace marker
 * key, written with the namespace's first grant, records the server process that wrote it; when it is
 * missing or was written by another process, the server grants nothing until every lease that could have
 * been granted before the loss has run out. Only the longest lease bounds that time, and it is lost with
 * the state, so every client declares it ({@link #maxLease}) and the marker keeps the largest declared
 * value; a shorter declaration than the recorded one, or a lease longer than the declaration, is refused.
 *
 * <p>Immutable.
 *
 * @param maxLease the longest lease the client will ask for; positive
 * @param unsafeGrantAfterRestart true to skip the check (grants as soon as the lock looks free)
 */
record HoldBack(Duration maxLease, boolean unsafeGrantAfterRestart) {
    /** The default declaration: the lock client's default lease time, 30 seconds. */
    static final Duration DEFAULT_MAX_LEASE = Duration.ofSeconds(30);

    /** On, with the default max lease. */
    static final HoldBack DEFAULT = new HoldBack(DEFAULT_MAX_LEASE, false);

    /**
     * A busy reply of the scripts at or below {@code -HELD_BACK} means held back, not held; must equal
     * {@code HELD_BACK} in epoch.lua (2^40 ms, far beyond the longest lease, 365 days).
     */
    static final long HELD_BACK = 1L << 40;

    HoldBack {
        Objects.requireNonNull(maxLease, "maxLease must not be null");
        if (maxLease.isNegative() || maxLease.isZero()) {
            throw new IllegalArgumentException("maxLease must be positive, got " + maxLease);
        }
    }

    HoldBack withMaxLease(Duration lease) {
        return new HoldBack(lease, unsafeGrantAfterRestart);
    }

    HoldBack withUnsafeGrantAfterRestart(boolean unsafe) {
        return new HoldBack(maxLease, unsafe);
    }

    /**
     * What the scripts are sent beside the epoch key: the max lease and its drift margin, in whole
     * milliseconds. The hold-back ends a {@link DriftMargin} after the longest lease could have run out, and
     * the margin is defined there only.
     */
    List<String> scriptArgs() {
        long millis = maxLease.toMillis();
        return List.of(Long.toString(millis), Long.toString(TimeUnit.NANOSECONDS.toMillis(DriftMargin.nanos(millis))));
    }

    /** Whether grants run the check. */
    boolean on() {
        return !unsafeGrantAfterRestart;
    }

    /**
     * Refuses a lease longer than the declaration, naming both values.
     *
     * @throws IllegalArgumentException when {@code leaseMillis} exceeds {@link #maxLease}
     */
    void check(String name, long leaseMillis) {
        if (on() && leaseMillis > maxLease.toMillis()) {
            throw new IllegalArgumentException("the lease of '" + name + "' (" + leaseMillis
                    + "ms) is longer than the declared maxLease (" + maxLease.toMillis()
                    + "ms): declare the longest lease of every client of the namespace (URI option maxLease=, "
                    + "builder maxLease(Duration)), so that grants after a restart wait for it");
        }
    }

    @Override
    public String toString() {
        return unsafeGrantAfterRestart ? "unsafeGrantAfterRestart" : "maxLease=" + maxLease.toMillis() + "ms";
    }
}
