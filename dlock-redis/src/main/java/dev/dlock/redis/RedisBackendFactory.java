package dev.dlock.redis;

import dev.dlock.LockBackendException;
import dev.dlock.spi.BackendContext;
import dev.dlock.spi.LockBackend;
import dev.dlock.spi.LockBackendFactory;
import java.time.Duration;
import java.util.Objects;

/**
 * Opens Redis backends for lock clients; made by {@link RedisBackends} and its builder. Immutable: the
 * {@code with...} methods return a new factory, so one factory can open backends for many clients, each
 * with its own connections (the {@link Opener} is called once per open).
 */
final class RedisBackendFactory implements LockBackendFactory {
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
    private final HoldBack holdBack;

    RedisBackendFactory(
            Opener opener,
            String description,
            boolean cluster,
            int replicaAcks,
            Duration replicaAckTimeout,
            boolean allowEviction,
            HoldBack holdBack) {
        this.opener = opener;
        this.description = description;
        this.cluster = cluster;
        this.replicaAcks = replicaAcks;
        this.replicaAckTimeout = replicaAckTimeout;
        this.allowEviction = allowEviction;
        this.holdBack = Objects.requireNonNull(holdBack, "holdBack");
    }

    /** A factory whose backends accept (true) or refuse (false) an evicting server; see the builder. */
    RedisBackendFactory withAllowEviction(boolean allow) {
        return new RedisBackendFactory(opener, description, cluster, replicaAcks, replicaAckTimeout, allow, holdBack);
    }

    /** A factory with other hold-back settings; see the builder's {@code maxLease} and opt-out. */
    RedisBackendFactory withHoldBack(HoldBack settings) {
        return new RedisBackendFactory(
                opener, description, cluster, replicaAcks, replicaAckTimeout, allowEviction, settings);
    }

    HoldBack holdBack() {
        return holdBack;
    }

    /**
     * A factory whose grants and renewals wait for replica acknowledgements; see the builder. A null
     * {@code timeout} is the default ({@link ReplicaAcks#effectiveTimeout}).
     */
    RedisBackendFactory withReplicaAcks(int replicas, Duration timeout) {
        if (replicas < 1) {
            throw new IllegalArgumentException("replicas must be at least 1, got " + replicas);
        }
        if (timeout != null && (timeout.isNegative() || timeout.isZero())) {
            throw new IllegalArgumentException("the replica acknowledgement timeout must be positive, got " + timeout);
        }
        if (cluster) {
            throw new IllegalArgumentException(
                    "replica acknowledgements are supported for standalone and Sentinel servers, not for Cluster");
        }
        return new RedisBackendFactory(opener, description, false, replicas, timeout, allowEviction, holdBack);
    }

    /**
     * Connects and returns a backend. Blocks at most the operation timeout.
     *
     * @param context the client's operation timeout and callbacks
     * @return an open backend
     * @throws LockBackendException when Redis cannot be reached, or its {@code maxmemory-policy} evicts
     *     (see {@link RedisBackends.Builder#allowEviction(boolean)})
     * @throws IllegalArgumentException when the replica acknowledgement timeout is not shorter than the
     *     operation timeout
     */
    @Override
    public LockBackend open(BackendContext context) {
        Duration timeout = context.operationTimeout();
        Duration ackTimeout = ReplicaAcks.effectiveTimeout(replicaAckTimeout, timeout);
        if (replicaAcks > 0 && ackTimeout.compareTo(timeout) >= 0) {
            throw new IllegalArgumentException("the replica acknowledgement timeout (" + ackTimeout
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
        ReplicaAcks acks = replicaAcks > 0
                ? new ReplicaAcks(connections.acks(), connections.library(), replicaAcks, ackTimeout)
                : null;
        return new RedisBackend(connections, timeout, acks, holdBack, description, context.events());
    }

    @Override
    public String toString() {
        return "RedisBackendFactory[" + description
                + (replicaAcks > 0
                        ? ", replicaAcks=" + replicaAcks + " within "
                                + (replicaAckTimeout != null ? replicaAckTimeout : "the default")
                        : "")
                + (allowEviction ? ", allowEviction" : "") + ", " + holdBack + "]";
    }
}
