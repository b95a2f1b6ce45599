package dev.dlock.internal;

import dev.dlock.LockListener;
import java.time.Duration;

/**
 * A client's options, validated when made. Not part of the API: {@code LockClient.Builder}, the one
 * builder, keeps an instance and replaces it through the {@code with...} methods; it is public only so
 * that {@code dev.dlock} can hand it to {@link Engine#open}.
 *
 * @param leaseTime default lease time of grants
 * @param renewal whether leases are renewed in the background by default
 * @param waitTime the wait of {@code acquire()}
 * @param localQueueLimit how many local callers may wait for one name
 * @param namespace the namespace of every name
 * @param operationTimeout the longest one store operation may take
 * @param listener receives metrics events
 * @param handoffPasses how many times in a row a hold may pass between threads of this client without
 *     the store (cohort hand-off, see {@link Cohort}); 0 turns hand-off off
 * @param handoffTime how long a chain of passes may last from its store grant; zero turns hand-off off
 */
public record EngineOptions(
        Duration leaseTime,
        boolean renewal,
        Duration waitTime,
        int localQueueLimit,
        String namespace,
        Duration operationTimeout,
        LockListener listener,
        int handoffPasses,
        Duration handoffTime) {
    /** The default listener, which ignores every event; a client with it starts no listener thread. */
    static final LockListener NO_LISTENER = new LockListener() {};

    /** The defaults: 30 s leases with renewal, 30 s wait, no queue limit, 5 s timeout, 32 passes in 50 ms. */
    public static final EngineOptions DEFAULTS = new EngineOptions(
            Duration.ofSeconds(30),
            true,
            Duration.ofSeconds(30),
            Integer.MAX_VALUE,
            "dlock",
            Duration.ofSeconds(5),
            NO_LISTENER,
            32,
            Duration.ofMillis(50));

    /**
     * Validates every option; the messages name the option and the bad value.
     *
     * @param leaseTime as described on the record
     * @param renewal as described on the record
     * @param waitTime as described on the record
     * @param localQueueLimit as described on the record
     * @param namespace as described on the record
     * @param operationTimeout as described on the record
     * @param listener as described on the record
     * @param handoffPasses as described on the record
     * @param handoffTime as described on the record
     * @throws IllegalArgumentException for a bad value
     */
    public EngineOptions {
        Checks.leaseTime(leaseTime);
        Checks.nonNegative(waitTime, "waitTime");
        if (localQueueLimit < 1) {
            throw new IllegalArgumentException("localQueueLimit must be at least 1, got " + localQueueLimit);
        }
        Checks.namespace(namespace);
        Checks.operationTimeout(operationTimeout);
        if (listener == null) {
            throw new IllegalArgumentException("listener must not be null");
        }
        if (handoffPasses < 0) {
            throw new IllegalArgumentException("localHandoff maxPasses must be zero or positive, got " + handoffPasses);
        }
        Checks.nonNegative(handoffTime, "localHandoff maxTime");
    }

    /**
     * These options with another lease time.
     *
     * @param value at least 10 ms, at most 365 days
     * @return the new options
     */
    public EngineOptions withLeaseTime(Duration value) {
        return new EngineOptions(
                value,
                renewal,
                waitTime,
                localQueueLimit,
                namespace,
                operationTimeout,
                listener,
                handoffPasses,
                handoffTime);
    }

    /**
     * These options with renewal on or off.
     *
     * @param value whether to renew
     * @return the new options
     */
    public EngineOptions withRenewal(boolean value) {
        return new EngineOptions(
                leaseTime,
                value,
                waitTime,
                localQueueLimit,
                namespace,
                operationTimeout,
                listener,
                handoffPasses,
                handoffTime);
    }

    /**
     * These options with another default wait.
     *
     * @param value zero or positive
     * @return the new options
     */
    public EngineOptions withWaitTime(Duration value) {
        return new EngineOptions(
                leaseTime,
                renewal,
                value,
                localQueueLimit,
                namespace,
                operationTimeout,
                listener,
                handoffPasses,
                handoffTime);
    }

    /**
     * These options with another local queue limit.
     *
     * @param value at least 1
     * @return the new options
     */
    public EngineOptions withLocalQueueLimit(int value) {
        return new EngineOptions(
                leaseTime, renewal, waitTime, value, namespace, operationTimeout, listener, handoffPasses, handoffTime);
    }

    /**
     * These options with another namespace.
     *
     * @param value 1 to 64 characters of {@code [A-Za-z0-9_.-]}
     * @return the new options
     */
    public EngineOptions withNamespace(String value) {
        return new EngineOptions(
                leaseTime,
                renewal,
                waitTime,
                localQueueLimit,
                value,
                operationTimeout,
                listener,
                handoffPasses,
                handoffTime);
    }

    /**
     * These options with another operation timeout.
     *
     * @param value positive, at most a day
     * @return the new options
     */
    public EngineOptions withOperationTimeout(Duration value) {
        return new EngineOptions(
                leaseTime, renewal, waitTime, localQueueLimit, namespace, value, listener, handoffPasses, handoffTime);
    }

    /**
     * These options with another listener.
     *
     * @param value not null
     * @return the new options
     */
    public EngineOptions withListener(LockListener value) {
        return new EngineOptions(
                leaseTime,
                renewal,
                waitTime,
                localQueueLimit,
                namespace,
                operationTimeout,
                value,
                handoffPasses,
                handoffTime);
    }

    /**
     * These options with another cohort hand-off bound.
     *
     * @param maxPasses zero or positive; 0 turns hand-off off
     * @param maxTime zero or positive; zero turns hand-off off
     * @return the new options
     */
    public EngineOptions withLocalHandoff(int maxPasses, Duration maxTime) {
        return new EngineOptions(
                leaseTime,
                renewal,
                waitTime,
                localQueueLimit,
                namespace,
                operationTimeout,
                listener,
                maxPasses,
                maxTime);
    }
}
