package dev.dlock.internal.base;

import dev.dlock.DistributedLock;
import java.nio.charset.StandardCharsets;
import java.time.Duration;
import java.util.regex.Pattern;

/**
 * Input validation with messages that name the problem. Every public entry point goes through here, and
 * each kind of input is checked (and a duration converted) by one method only.
 */
public final class Checks {
    static final int MAX_NAME_BYTES = 1024;
    /** Backends hand the operation timeout to clients that count it in int milliseconds. */
    static final Duration MAX_OPERATION_TIMEOUT = Duration.ofDays(1);

    private static final Pattern NAMESPACE = Pattern.compile("[A-Za-z0-9_.-]{1,64}");

    private Checks() {}

    /**
     * Checks a lock name: not null, not empty, no NUL, no unpaired surrogate, at most 1,024 UTF-8 bytes.
     *
     * @param name the name
     * @return the name
     * @throws IllegalArgumentException naming the problem
     */
    public static String name(String name) {
        if (name == null) {
            throw new IllegalArgumentException("lock name must not be null");
        }
        if (name.isEmpty()) {
            throw new IllegalArgumentException("lock name must not be empty");
        }
        for (int i = 0; i < name.length(); i++) {
            char c = name.charAt(i);
            if (c == 0) {
                throw new IllegalArgumentException("lock name must not contain NUL (U+0000) at index " + i);
            }
            if (Character.isHighSurrogate(c) && i + 1 < name.length() && Character.isLowSurrogate(name.charAt(i + 1))) {
                i++;
            } else if (Character.isSurrogate(c)) {
                throw new IllegalArgumentException("lock name has an unpaired surrogate at index " + i);
            }
        }
        int bytes = name.getBytes(StandardCharsets.UTF_8).length;
        if (bytes > MAX_NAME_BYTES) {
            throw new IllegalArgumentException(
                    "lock name is " + bytes + " UTF-8 bytes long; the limit is " + MAX_NAME_BYTES);
        }
        return name;
    }

    /**
     * Checks a namespace: 1 to 64 characters of {@code [A-Za-z0-9_.-]}.
     *
     * @param namespace the namespace
     * @return the namespace
     * @throws IllegalArgumentException naming the problem
     */
    public static String namespace(String namespace) {
        if (namespace == null || !NAMESPACE.matcher(namespace).matches()) {
            throw new IllegalArgumentException("namespace must be 1 to 64 characters of [A-Za-z0-9_.-], got "
                    + (namespace == null ? "null" : "'" + namespace + "'"));
        }
        return namespace;
    }

    /**
     * Checks that a duration is positive.
     *
     * @param d the duration
     * @param what the option's name in the message
     * @return the duration
     * @throws IllegalArgumentException for null, zero or negative
     */
    public static Duration positive(Duration d, String what) {
        if (d == null) {
            throw new IllegalArgumentException(what + " must not be null");
        }
        if (d.isNegative() || d.isZero()) {
            throw new IllegalArgumentException(what + " must be positive, got " + d);
        }
        return d;
    }

    /**
     * Checks a lease time: at least 10 ms, at most {@code DistributedLock.MAX_LEASE_TIME}.
     *
     * @param d the lease time
     * @return the lease time in milliseconds, the one unit the engine keeps it in
     * @throws IllegalArgumentException naming the problem
     */
    public static long leaseMillis(Duration d) {
        positive(d, "leaseTime");
        if (d.compareTo(DistributedLock.MIN_LEASE_TIME) < 0) {
            throw new IllegalArgumentException("leaseTime must be at least 10ms, got " + d);
        }
        if (d.compareTo(DistributedLock.MAX_LEASE_TIME) > 0) {
            throw new IllegalArgumentException(
                    "leaseTime must be at most " + DistributedLock.MAX_LEASE_TIME + ", got " + d);
        }
        return d.toMillis();
    }

    /**
     * Checks an operation timeout: positive, at most a day.
     *
     * @param d the timeout
     * @return the timeout
     * @throws IllegalArgumentException naming the problem
     */
    public static Duration operationTimeout(Duration d) {
        positive(d, "operationTimeout");
        if (d.compareTo(MAX_OPERATION_TIMEOUT) > 0) {
            throw new IllegalArgumentException(
                    "operationTimeout must be at most " + MAX_OPERATION_TIMEOUT + ", got " + d);
        }
        return d;
    }

    /**
     * Checks that a duration is zero or positive.
     *
     * @param d the duration
     * @param what the option's name in the message
     * @return the duration
     * @throws IllegalArgumentException for null or negative
     */
    public static Duration nonNegative(Duration d, String what) {
        if (d == null) {
            throw new IllegalArgumentException(what + " must not be null");
        }
        if (d.isNegative()) {
            throw new IllegalArgumentException(what + " must not be negative, got " + d);
        }
        return d;
    }

    /**
     * Checks the delay of a later release ({@code closeAfter}, {@code unlockAfter}): zero up to the longest
     * lease time, 365 days.
     *
     * @param delay the delay
     * @return the delay
     * @throws IllegalArgumentException for null, negative or longer
     */
    public static Duration releaseDelay(Duration delay) {
        nonNegative(delay, "delay");
        if (delay.compareTo(DistributedLock.MAX_LEASE_TIME) > 0) {
            throw new IllegalArgumentException("delay must be at most 365 days, got " + delay);
        }
        return delay;
    }

    /**
     * Checks a semaphore's permits.
     *
     * @param permits at least 1
     * @return the permits
     * @throws IllegalArgumentException for fewer than 1
     */
    public static int permits(int permits) {
        if (permits < 1) {
            throw new IllegalArgumentException("permits must be at least 1, got " + permits);
        }
        return permits;
    }

    /**
     * Checks a local queue limit.
     *
     * @param limit at least 1
     * @return the limit
     * @throws IllegalArgumentException for less than 1
     */
    public static int localQueueLimit(int limit) {
        if (limit < 1) {
            throw new IllegalArgumentException("localQueueLimit must be at least 1, got " + limit);
        }
        return limit;
    }

    /**
     * Checks the passes of the cohort hand-off.
     *
     * @param maxPasses zero or positive
     * @return the passes
     * @throws IllegalArgumentException for a negative number
     */
    public static int handoffPasses(int maxPasses) {
        if (maxPasses < 0) {
            throw new IllegalArgumentException("localHandoff maxPasses must be zero or positive, got " + maxPasses);
        }
        return maxPasses;
    }

    /**
     * Checks that an option is given.
     *
     * @param <T> its type
     * @param value the option
     * @param what its name in the message
     * @return the option
     * @throws IllegalArgumentException for null
     */
    public static <T> T notNull(T value, String what) {
        if (value == null) {
            throw new IllegalArgumentException(what + " must not be null");
        }
        return value;
    }

    /** Whole seconds from which on a duration no longer fits in a {@code long} of nanoseconds. */
    private static final long NANOS_OVERFLOW_SECONDS = Long.MAX_VALUE / 1_000_000_000L;

    /**
     * Nanoseconds of a duration, saturated so that very long waits do not overflow: 292 years or more is
     * {@code Long.MAX_VALUE} ("never"). Decided without letting {@link Duration#toNanos()} throw, because
     * {@code lock()} waits "forever" on every call and an exception per call is costly.
     *
     * @param d the duration, not negative
     * @return its nanoseconds, or {@code Long.MAX_VALUE}
     */
    public static long saturatedNanos(Duration d) {
        long seconds = d.getSeconds();
        if (seconds >= NANOS_OVERFLOW_SECONDS || seconds < -NANOS_OVERFLOW_SECONDS) {
            return Long.MAX_VALUE;
        }
        return d.toNanos();
    }

    /**
     * {@code now + nanos}, saturated at {@code Long.MAX_VALUE} meaning "never".
     *
     * @param now a {@code System.nanoTime()} reading
     * @param nanos the time left, {@code Long.MAX_VALUE} for never
     * @return the deadline
     */
    public static long deadline(long now, long nanos) {
        long sum = now + nanos;
        return nanos == Long.MAX_VALUE || sum - now != nanos || sum < now ? Long.MAX_VALUE : sum;
    }
}
