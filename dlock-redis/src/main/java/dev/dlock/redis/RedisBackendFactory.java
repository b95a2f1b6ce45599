package dev.dlock.redis;

import dev.dlock.LockBackendException;
import dev.dlock.spi.BackendContext;
import dev.dlock.spi.LockBackend;
import dev.dlock.spi.LockBackendFactory;
import java.time.Duration;
import java.util.Objects;

/**
 * Opens Redis backends for lock clients; made by {@link RedisBackends}. Immutable: {@link
 * #withReplicaAcks} returns a new factory.
 *
 * <pre>{@code
 * LockClient client = LockClient.builder(RedisBackends.of(redisClient).withReplicaAcks(1, Duration.ofMillis(50)))
 *         .build();
 * }</pre>
 */
public final class RedisBackendFactory implements LockBackendFactory {
    /** Opens the connections of one backend, given the operation timeout and whether to add the WAIT one. */
    @FunctionalInterface
    interface Opener {
        Connections open(Duration operationTimeout, boolean ackConnection);
    }

    private final Opener opener;
    private final String description;
    private final boolean cluster;
    private final int replicaAcks;
    private final Duration replicaAckTimeout;
    private final boolean allowEviction;

    RedisBackendFactory(
            Opener opener,
            String description,
            boolean cluster,
            int replicaAcks,
            Duration replicaAckTimeout,
            boolean allowEviction) {
        this.opener = opener;
        this.description = description;
        this.cluster = cluster;
        this.replicaAcks = replicaAcks;
        this.replicaAckTimeout = replicaAckTimeout;
        this.allowEviction = allowEviction;
    }

    /**
     * A factory whose backends accept a server with an evicting {@code maxmemory-policy}. By default
     * opening a backend refuses one with {@link LockBackendException}: under {@code volatile-*} Redis may
     * evict the keys of a live hold, under {@code allkeys-*} the fencing-token counters too, and either
     * breaks mutual exclusion. Use this only when the server can never reach its memory limit. The URI
     * option is {@code allowEviction=true}.
     *
     * @return a new factory with the check off
     */
    public RedisBackendFactory allowingEviction() {
        return new RedisBackendFactory(opener, description, cluster, replicaAcks, replicaAckTimeout, true);
    }

    /**
     * A factory whose backends make every grant and renewal wait until {@code replicas} replicas have
     * acknowledged it ({@code WAIT replicas timeout}); a grant with too few acknowledgements is given back
     * and the acquisition fails with {@link LockBackendException}. Off by default.
     *
     * <p>This narrows, but does not close, the window in which a failover loses a lock: Redis replication
     * stays asynchronous, a replica that acknowledged may still not be the one promoted, and {@code WAIT}
     * does not make Redis a consensus store. Fencing tokens remain the safety net. Each grant and renewal
     * takes one extra command on a connection reserved for them. Not available for Cluster.
     *
     * @param replicas how many replicas must acknowledge, at least 1
     * @param timeout how long to wait for them; positive and shorter than the client's operation timeout
     * @return a new factory with the option set
     * @throws IllegalArgumentException for a bad value, or for a Cluster factory
     */
    public RedisBackendFactory withReplicaAcks(int replicas, Duration timeout) {
        if (replicas < 1) {
            throw new IllegalArgumentException("replicas must be at least 1, got " + replicas);
        }
        Objects.requireNonNull(timeout, "timeout must not be null");
        if (timeout.isNegative() || timeout.isZero()) {
            throw new IllegalArgumentException("the replica acknowledgement timeout must be positive, got " + timeout);
        }
        if (cluster) {
            throw new IllegalArgumentException(
                    "replica acknowledgements are supported for standalone and Sentinel servers, not for Cluster");
        }
        return new RedisBackendFactory(opener, description, false, replicas, timeout, allowEviction);
    }

    /**
     * Connects and returns a backend. Blocks at most the operation timeout.
     *
     * @param context the client's operation timeout and callbacks
     * @return an open backend
     * @throws LockBackendException when Redis cannot be reached, or its {@code maxmemory-policy} evicts
     *     (see {@link #allowingEviction()})
     * @throws IllegalArgumentException when the replica acknowledgement timeout is not shorter than the
     *     operation timeout
     */
    @Override
    public LockBackend open(BackendContext context) {
        Duration timeout = context.operationTimeout();
        if (replicaAcks > 0 && replicaAckTimeout.compareTo(timeout) >= 0) {
            throw new IllegalArgumentException("the replica acknowledgement timeout (" + replicaAckTimeout
                    + ") must be shorter than the operation timeout (" + timeout + ")");
        }
        Connections connections;
        try {
            connections = opener.open(timeout, replicaAcks > 0);
        } catch (IllegalArgumentException e) {
            throw e;
        } catch (RuntimeException e) {
            throw new LockBackendException("cannot connect to Redis at " + description + ": " + e.getMessage(), e);
        }
        if (!allowEviction) {
            try {
                EvictionCheck.verify(connections, description, timeout);
            } catch (RuntimeException e) {
                connections.close(timeout);
                throw e;
            }
        }
        return new RedisBackend(connections, timeout, replicaAcks, replicaAckTimeout);
    }

    @Override
    public String toString() {
        return "RedisBackendFactory[" + description
                + (replicaAcks > 0 ? ", replicaAcks=" + replicaAcks + " within " + replicaAckTimeout : "")
                + (allowEviction ? ", allowEviction" : "") + "]";
    }
}
