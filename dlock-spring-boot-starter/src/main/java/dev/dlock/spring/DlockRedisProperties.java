package dev.dlock.spring;

import java.time.Duration;

/**
 * The {@code dlock.redis.*} properties: used when the store is the application's Lettuce connection
 * factory. With {@code dlock.uri}, put these in the URI instead.
 */
public class DlockRedisProperties {
    /**
     * How many replicas must acknowledge every grant and renewal (Redis WAIT) before it counts; 0 for
     * none. Standalone and Sentinel only.
     */
    private int replicaAcks;

    /** How long a grant or renewal waits for the replica acknowledgements. */
    private Duration replicaAckTimeout = Duration.ofMillis(100);

    /**
     * The longest lease any client of the namespace takes; after the server lost its state, grants wait
     * for it. Null for the backend's default (30 s). Not for Cluster.
     */
    private Duration maxLease;

    /** Opts out of holding grants back after the server lost its state (the cost: two holders). */
    private boolean unsafeGrantAfterRestart;

    /** Creates the defaults. */
    public DlockRedisProperties() {}

    /**
     * The replica acknowledgements.
     *
     * @return how many replicas must acknowledge, 0 for none
     */
    public int getReplicaAcks() {
        return replicaAcks;
    }

    /**
     * Sets the replica acknowledgements.
     *
     * @param replicaAcks how many replicas must acknowledge, 0 for none
     */
    public void setReplicaAcks(int replicaAcks) {
        this.replicaAcks = replicaAcks;
    }

    /**
     * The acknowledgement timeout.
     *
     * @return the timeout
     */
    public Duration getReplicaAckTimeout() {
        return replicaAckTimeout;
    }

    /**
     * Sets the acknowledgement timeout.
     *
     * @param replicaAckTimeout positive, shorter than the operation timeout
     */
    public void setReplicaAckTimeout(Duration replicaAckTimeout) {
        this.replicaAckTimeout = replicaAckTimeout;
    }

    /**
     * The declared longest lease.
     *
     * @return the lease, or null for the backend's default
     */
    public Duration getMaxLease() {
        return maxLease;
    }

    /**
     * Declares the longest lease any client of the namespace takes ({@code RedisBackends.Builder#maxLease}).
     *
     * @param maxLease positive, at least the lease time of every lock
     */
    public void setMaxLease(Duration maxLease) {
        this.maxLease = maxLease;
    }

    /**
     * Whether grants are made at once after the server lost its state.
     *
     * @return true when opted out of the hold-back
     */
    public boolean isUnsafeGrantAfterRestart() {
        return unsafeGrantAfterRestart;
    }

    /**
     * Opts out of the hold-back after a lost state ({@code RedisBackends.Builder#unsafeGrantAfterRestart}).
     *
     * @param unsafe true to grant at once after a restart or failover
     */
    public void setUnsafeGrantAfterRestart(boolean unsafe) {
        this.unsafeGrantAfterRestart = unsafe;
    }
}
