package dev.dlock.internal;

import dev.dlock.DistributedLock;
import java.nio.charset.StandardCharsets;
import java.time.Duration;
import java.util.regex.Pattern;

/** Input validation with messages that name the problem. Every public entry point goes through here. */
final class Checks {
    static final int MAX_NAME_BYTES = 1024;
    /** Longer leases would overflow nanosecond deadlines and store expiries. */
    /** Backends hand the operation timeout to clients that count it in int milliseconds. */
    static final Duration MAX_OPERATION_TIMEOUT = Duration.ofDays(1);

    private static final Pattern NAMESPACE = Pattern.compile("[A-Za-z0-9_.-]{1,64}");

    private Checks() {}

    static String name(String name) {
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

    static String namespace(String namespace) {
        if (namespace == null || !NAMESPACE.matcher(namespace).matches()) {
            throw new IllegalArgumentException("namespace must be 1 to 64 characters of [A-Za-z0-9_.-], got "
                    + (namespace == null ? "null" : "'" + namespace + "'"));
        }
        return namespace;
    }

    static Duration positive(Duration d, String what) {
        if (d == null) {
            throw new IllegalArgumentException(what + " must not be null");
        }
        if (d.isNegative() || d.isZero()) {
            throw new IllegalArgumentException(what + " must be positive, got " + d);
        }
        return d;
    }

    static Duration leaseTime(Duration d) {
        positive(d, "leaseTime");
        if (d.compareTo(DistributedLock.MIN_LEASE_TIME) < 0) {
            throw new IllegalArgumentException("leaseTime must be at least 10ms, got " + d);
        }
        if (d.compareTo(DistributedLock.MAX_LEASE_TIME) > 0) {
            throw new IllegalArgumentException(
                    "leaseTime must be at most " + DistributedLock.MAX_LEASE_TIME + ", got " + d);
        }
        return d;
    }

    static Duration operationTimeout(Duration d) {
        positive(d, "operationTimeout");
        if (d.compareTo(MAX_OPERATION_TIMEOUT) > 0) {
            throw new IllegalArgumentException(
                    "operationTimeout must be at most " + MAX_OPERATION_TIMEOUT + ", got " + d);
        }
        return d;
    }

    static Duration nonNegative(Duration d, String what) {
        if (d == null) {
            throw new IllegalArgumentException(what + " must not be null");
        }
        if (d.isNegative()) {
            throw new IllegalArgumentException(what + " must not be negative, got " + d);
        }
        return d;
    }

    static int permits(int permits) {
        if (permits < 1) {
            throw new IllegalArgumentException("permits must be at least 1, got " + permits);
        }
        return permits;
    }

    /** Whole seconds from which on a duration no longer fits in a {@code long} of nanoseconds. */
    private static final long NANOS_OVERFLOW_SECONDS = Long.MAX_VALUE / 1_000_000_000L;

    /**
     * Nanoseconds of a duration, saturated so that very long waits do not overflow: 292 years or more is
     * {@code Long.MAX_VALUE} ("never"). Decided without letting {@link Duration#toNanos()} throw, because
     * {@code lock()} waits "forever" on every call and an exception per call is costly.
     */
    static long saturatedNanos(Duration d) {
        long seconds = d.getSeconds();
        if (seconds >= NANOS_OVERFLOW_SECONDS || seconds < -NANOS_OVERFLOW_SECONDS) {
            return Long.MAX_VALUE;
        }
        return d.toNanos();
    }

    /** {@code now + nanos}, saturated at {@code Long.MAX_VALUE} meaning "never". */
    static long deadline(long now, long nanos) {
        long sum = now + nanos;
        return nanos == Long.MAX_VALUE || sum - now != nanos || sum < now ? Long.MAX_VALUE : sum;
    }
}
