package dev.dlock.internal;

import dev.dlock.LockListener;
import java.time.Duration;
import java.util.Objects;

/**
 * A client's validated options. Not part of the API: {@code LockClient.Builder} is the public face.
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

    /**
     * A builder with the defaults.
     *
     * @return a builder
     */
    public static Builder builder() {
        return new Builder();
    }

    /** Validating builder; each setter throws {@link IllegalArgumentException} for a bad value. */
    public static final class Builder {
        private Duration leaseTime = Duration.ofSeconds(30);
        private boolean renewal = true;
        private Duration waitTime = Duration.ofSeconds(30);
        private int localQueueLimit = Integer.MAX_VALUE;
        private String namespace = "dlock";
        private Duration operationTimeout = Duration.ofSeconds(5);
        private LockListener listener = NO_LISTENER;
        private int handoffPasses = 32;
        private Duration handoffTime = Duration.ofMillis(50);

        private Builder() {}

        /**
         * Sets the lease time.
         *
         * @param value at least 10 ms, at most 365 days
         * @return this builder
         */
        public Builder leaseTime(Duration value) {
            leaseTime = Checks.leaseTime(value);
            return this;
        }

        /**
         * Sets renewal.
         *
         * @param value whether to renew
         * @return this builder
         */
        public Builder renewal(boolean value) {
            renewal = value;
            return this;
        }

        /**
         * Sets the default wait.
         *
         * @param value zero or positive
         * @return this builder
         */
        public Builder waitTime(Duration value) {
            waitTime = Checks.nonNegative(value, "waitTime");
            return this;
        }

        /**
         * Sets the local queue limit.
         *
         * @param value at least 1
         * @return this builder
         */
        public Builder localQueueLimit(int value) {
            if (value < 1) {
                throw new IllegalArgumentException("localQueueLimit must be at least 1, got " + value);
            }
            localQueueLimit = value;
            return this;
        }

        /**
         * Sets the namespace.
         *
         * @param value 1 to 64 characters of {@code [A-Za-z0-9_.-]}
         * @return this builder
         */
        public Builder namespace(String value) {
            namespace = Checks.namespace(value);
            return this;
        }

        /**
         * Sets the operation timeout.
         *
         * @param value positive, at most a day
         * @return this builder
         */
        public Builder operationTimeout(Duration value) {
            operationTimeout = Checks.operationTimeout(value);
            return this;
        }

        /**
         * Sets the listener.
         *
         * @param value not null
         * @return this builder
         */
        public Builder listener(LockListener value) {
            if (value == null) {
                throw new IllegalArgumentException("listener must not be null");
            }
            listener = value;
            return this;
        }

        /**
         * Sets the cohort hand-off bound.
         *
         * @param maxPasses zero or positive; 0 turns hand-off off
         * @param maxTime zero or positive; zero turns hand-off off
         * @return this builder
         */
        public Builder localHandoff(int maxPasses, Duration maxTime) {
            if (maxPasses < 0) {
                throw new IllegalArgumentException("localHandoff maxPasses must be zero or positive, got " + maxPasses);
            }
            handoffTime = Checks.nonNegative(maxTime, "localHandoff maxTime");
            handoffPasses = maxPasses;
            return this;
        }

        /**
         * Builds the options.
         *
         * @return the options
         */
        public EngineOptions build() {
            return new EngineOptions(
                    leaseTime,
                    renewal,
                    waitTime,
                    localQueueLimit,
                    namespace,
                    operationTimeout,
                    listener,
                    handoffPasses,
                    handoffTime);
        }
    }

    /**
     * Checks that nothing is null.
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
     */
    public EngineOptions {
        Objects.requireNonNull(leaseTime);
        Objects.requireNonNull(waitTime);
        Objects.requireNonNull(namespace);
        Objects.requireNonNull(operationTimeout);
        Objects.requireNonNull(listener);
        Objects.requireNonNull(handoffTime);
    }
}
