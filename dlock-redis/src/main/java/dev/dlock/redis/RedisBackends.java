package dev.dlock.redis;

import dev.dlock.spi.LockBackendFactory;
import io.lettuce.core.ClientOptions;
import io.lettuce.core.RedisClient;
import io.lettuce.core.RedisConnectionException;
import io.lettuce.core.RedisURI;
import io.lettuce.core.SocketOptions;
import io.lettuce.core.TimeoutOptions;
import io.lettuce.core.cluster.ClusterClientOptions;
import io.lettuce.core.cluster.ClusterTopologyRefreshOptions;
import io.lettuce.core.cluster.RedisClusterClient;
import io.lettuce.core.protocol.RedisCommand;
import io.lettuce.core.resource.ClientResources;
import java.time.Duration;
import java.util.List;
import java.util.Objects;
import java.util.concurrent.TimeUnit;

/**
 * Factories for the Redis backend: {@code of(...)} with default settings, {@code builder(...)} to set
 * options first; from a URI or from a Lettuce client the application already has. Redlock over several
 * independent masters is {@link RedlockBackends}.
 *
 * <h2>From a URI</h2>
 *
 * <p>{@code LockClient.connect("redis://localhost:6379")} finds this backend by its scheme; {@link
 * #of(String)} does the same explicitly. The backend then owns its Lettuce client: every lock call and the
 * connect are bounded by the lock client's operation timeout (the engine's one timer; Lettuce's own
 * per-command timer is off), a dead server makes commands fail at once
 * instead of queueing them, the client reconnects by itself (backing off up to 1 s), and lock commands
 * in flight when a connection breaks are failed, never replayed. URI syntax: see {@link
 * RedisBackendProvider}.
 *
 * <h2>From a Lettuce client</h2>
 *
 * <!-- example: redis-client (RedisBackendsExamplesTest; a test checks that both are the same) -->
 * <pre>{@code
 * RedisClient redis = RedisClient.create(redisUri);
 * LockBackendFactory backend = RedisBackends.builder(redis)
 *         .replicaAcks(1, Duration.ofMillis(500))
 *         .build();
 * try (LockClient locks = LockClient.builder(backend).build()) {
 *     try (Lease lease = locks.lock("report").acquire(Duration.ofSeconds(5))) {
 *         writeReport(lease.fencingToken());
 *     }
 * }
 * redis.shutdown();
 * }</pre>
 *
 * <p>The backend opens its own connections from the given client (two, or three with replica
 * acknowledgements) and sets their command timeout to the operation timeout; the client's other options
 * (reconnect, TLS, authentication) are the application's. Closing the lock client closes those
 * connections, never the Lettuce client. A {@link RedisClient} must have a default URI ({@code
 * RedisClient.create(uri)}); a Sentinel URI there works as well.
 */
public final class RedisBackends {
    private RedisBackends() {}

    /**
     * A factory for the servers a URI names, with the options the URI gives.
     *
     * @param uri a {@code redis://}, {@code rediss://}, {@code redis-sentinel://}, {@code rediss-sentinel://},
     *     {@code redis-cluster://} or {@code rediss-cluster://} URI
     * @return a factory for {@code LockClient.builder(LockBackendFactory)}; nothing connects until it is
     *     opened
     * @throws IllegalArgumentException naming what is wrong with the URI
     */
    public static LockBackendFactory of(String uri) {
        return builder(uri).build();
    }

    /**
     * A factory that opens connections from an existing standalone or Sentinel client.
     *
     * @param client a client created with a default URI; stays owned by the caller
     * @return a factory for {@code LockClient.builder(LockBackendFactory)}
     */
    public static LockBackendFactory of(RedisClient client) {
        return builder(client).build();
    }

    /**
     * A factory that opens connections from an existing Cluster client.
     *
     * @param client a Cluster client; stays owned by the caller
     * @return a factory for {@code LockClient.builder(LockBackendFactory)}
     */
    public static LockBackendFactory of(RedisClusterClient client) {
        return builder(client).build();
    }

    /**
     * Starts configuring a backend for the servers a URI names; the URI's own options ({@code
     * allowEviction}, {@code waitReplicas}, {@code waitTimeout}) are the builder's starting values.
     *
     * @param uri as for {@link #of(String)}
     * @return a builder
     * @throws IllegalArgumentException naming what is wrong with the URI
     */
    public static Builder builder(String uri) {
        RedisUris.Parsed parsed = RedisUris.parse(uri);
        if (parsed.topology() == RedisUris.Topology.REDLOCK) {
            throw new IllegalArgumentException("'" + RedisUris.redact(uri)
                    + "' is a Redlock URI: use RedlockBackends.of(String) or LockClient.connect");
        }
        String description = RedisUris.redact(uri);
        // Each open parses again: Lettuce URIs are mutable, so every backend gets its own.
        RedisBackendFactory factory = parsed.topology() == RedisUris.Topology.CLUSTER
                ? new RedisBackendFactory(
                        (timeout, acks) -> openCluster(RedisUris.parse(uri).servers(), timeout),
                        description,
                        true,
                        0,
                        null,
                        parsed.allowEviction(),
                        HoldBack.DEFAULT)
                : new RedisBackendFactory(
                        (timeout, acks) ->
                                openStandalone(RedisUris.parse(uri).servers().get(0), timeout, acks),
                        description,
                        false,
                        0,
                        null,
                        parsed.allowEviction(),
                        HoldBack.DEFAULT);
        factory = factory.withHoldBack(hold(parsed));
        return new Builder(
                parsed.replicaAcks() > 0
                        ? factory.withReplicaAcks(parsed.replicaAcks(), parsed.replicaAckTimeout())
                        : factory);
    }

    /** The hold-back settings a URI gives: its {@code maxLease} and {@code unsafeGrantAfterRestart}. */
    static HoldBack hold(RedisUris.Parsed parsed) {
        HoldBack settings = HoldBack.DEFAULT.withUnsafeGrantAfterRestart(parsed.unsafeGrantAfterRestart());
        return parsed.maxLease() == null ? settings : settings.withMaxLease(parsed.maxLease());
    }

    /**
     * Starts configuring a backend that opens connections from an existing standalone or Sentinel client.
     *
     * @param client a client created with a default URI; stays owned by the caller
     * @return a builder
     */
    public static Builder builder(RedisClient client) {
        return new Builder(fromClient(client));
    }

    /** The default factory over a standalone or Sentinel client the caller keeps owning. */
    static RedisBackendFactory fromClient(RedisClient client) {
        Objects.requireNonNull(client, "client must not be null");
        return new RedisBackendFactory(
                (timeout, acks) -> Connections.standalone(client, null, timeout, acks, () -> {}),
                "a RedisClient",
                false,
                0,
                null,
                false,
                HoldBack.DEFAULT);
    }

    /**
     * Starts configuring a backend that opens connections from an existing Cluster client.
     *
     * @param client a Cluster client; stays owned by the caller
     * @return a builder
     */
    public static Builder builder(RedisClusterClient client) {
        Objects.requireNonNull(client, "client must not be null");
        return new Builder(new RedisBackendFactory(
                (timeout, acks) -> Connections.cluster(client, timeout, () -> {}),
                "a RedisClusterClient",
                true,
                0,
                null,
                false,
                HoldBack.DEFAULT));
    }

    /** Settings of a Redis backend. Every setter validates at once. */
    public static final class Builder {
        private RedisBackendFactory factory;

        private Builder(RedisBackendFactory factory) {
            this.factory = factory;
        }

        /**
         * Makes every grant and renewal wait until {@code replicas} replicas have acknowledged it ({@code
         * WAIT replicas timeout}); a grant with too few acknowledgements is given back and the acquisition
         * fails with {@link dev.dlock.LockBackendException}; a renewal with too few fails and is retried
         * until the lease's deadline. On by default for a Sentinel URI (one replica within half the
         * operation timeout; {@code waitReplicas=0} turns it off), off otherwise: a {@link
         * RedisClient} on a Sentinel URI cannot be told from a standalone one, so set it here. The URI
         * options are {@code waitReplicas=N&waitTimeout=50ms}.
         *
         * <p>On Sentinel it keeps a holder from being kept believing by a deposed master that still serves
         * its renewals after a failover (its renewals there are acknowledged by no replica), which the
         * hold-back after a lost state alone does not (see docs/safety.md). It does not make Redis a
         * consensus store: replication stays asynchronous, and a replica that acknowledged may still not be
         * the one promoted (the hold-back covers that). Fencing tokens remain the safety net.
         * Each grant and renewal takes one extra command on a connection reserved for them. Not available
         * for Cluster. The timeout must be shorter than the lock client's operation timeout (checked when
         * the backend opens).
         *
         * @param replicas how many replicas must acknowledge, at least 1
         * @param timeout how long to wait for them; positive
         * @return this builder
         * @throws IllegalArgumentException for a bad value, or for a Cluster backend
         */
        public Builder replicaAcks(int replicas, Duration timeout) {
            Objects.requireNonNull(timeout, "timeout must not be null");
            factory = factory.withReplicaAcks(replicas, timeout);
            return this;
        }

        /**
         * Whether to accept a server with an evicting {@code maxmemory-policy}. Default false: opening a
         * backend refuses one with {@link dev.dlock.LockBackendException}, because under {@code
         * volatile-*} Redis may evict the keys of a live hold, under {@code allkeys-*} the fencing-token
         * counters too, and either breaks mutual exclusion. Allow it only when the server can never reach
         * its memory limit. The URI option is {@code allowEviction=true}.
         *
         * @param allow true to skip the check
         * @return this builder
         */
        public Builder allowEviction(boolean allow) {
            factory = factory.withAllowEviction(allow);
            return this;
        }

        /**
         * Declares the longest lease this client asks for; every client of a namespace must declare the
         * same. Default 30 seconds (the lock client's default lease time); the URI option is {@code
         * maxLease=30s}. After the server lost its state (restarted without persistence, restarted from a
         * file that misses the last writes, a Sentinel or Cluster failover, or the namespace's first grant
         * on a server up for less than this), grants wait until every lease granted before the loss has run
         * out: the server's start (or the moment the loss was seen) plus this, plus 1% drift. In a Cluster
         * this holds per hash slot: after a failover, each slot's first grant waits. A lease longer than
         * the declaration fails the acquisition with an exception naming both values; a client declaring
         * less than another client of the namespace did is refused by the server, naming both values.
         *
         * @param maxLease positive
         * @return this builder
         * @throws IllegalArgumentException for a value that is not positive
         */
        public Builder maxLease(Duration maxLease) {
            factory = factory.withHoldBack(factory.holdBack().withMaxLease(maxLease));
            return this;
        }

        /**
         * Opts out of the hold-back after a lost state (see {@link #maxLease}): grants as soon as the lock
         * looks free, as before. The cost: after a restart without persistence (or a failover to a replica
         * that missed a grant) another client can be granted a lock while its previous holder's lease is
         * still valid, until that holder's next renewal tells it. Default false; the URI option is {@code
         * unsafeGrantAfterRestart=true}.
         *
         * @param unsafe true to grant at once after a restart
         * @return this builder
         */
        public Builder unsafeGrantAfterRestart(boolean unsafe) {
            factory = factory.withHoldBack(factory.holdBack().withUnsafeGrantAfterRestart(unsafe));
            return this;
        }

        /**
         * The factory to pass to {@code LockClient.builder(LockBackendFactory)}.
         *
         * @return a factory; nothing connects until it is opened
         */
        public LockBackendFactory build() {
            return factory;
        }
    }

    /** Opens the connections of one standalone master from a server URI; the client is the backend's own. */
    static Connections openStandalone(RedisURI server, Duration timeout, boolean acks) {
        ClientResources resources = SharedResources.acquire();
        RedisClient client;
        try {
            client = RedisClient.create(resources);
            client.setOptions(configure(ClientOptions.builder(), timeout).build());
        } catch (RuntimeException e) {
            SharedResources.release(timeout);
            throw e;
        }
        server.setTimeout(timeout);
        return Connections.standalone(client, server, timeout, acks, () -> shutdown(client, timeout));
    }

    private static Connections openCluster(List<RedisURI> seeds, Duration timeout) {
        ClientResources resources = SharedResources.acquire();
        RedisClusterClient client;
        try {
            client = RedisClusterClient.create(
                    resources,
                    seeds.stream()
                            .map(seed ->
                                    RedisURI.builder(seed).withTimeout(timeout).build())
                            .toList());
            ClusterClientOptions.Builder options = ClusterClientOptions.builder()
                    .topologyRefreshOptions(ClusterTopologyRefreshOptions.builder()
                            .enableAllAdaptiveRefreshTriggers()
                            .build());
            configure(options, timeout);
            client.setOptions(options.build());
        } catch (RuntimeException e) {
            SharedResources.release(timeout);
            throw e;
        }
        return Connections.cluster(client, timeout, () -> shutdown(client, timeout));
    }

    private static <B extends ClientOptions.Builder> B configure(B builder, Duration timeout) {
        builder.autoReconnect(true)
                .disconnectedBehavior(ClientOptions.DisconnectedBehavior.REJECT_COMMANDS)
                .socketOptions(SocketOptions.builder()
                        .connectTimeout(timeout)
                        .keepAlive(true)
                        .build())
                // No per-command timer: the engine bounds every store call by the operation timeout with
                // one timer for all calls (StoreCalls); a Lettuce timer per command only added work.
                .timeoutOptions(TimeoutOptions.builder().timeoutCommands(false).build())
                .replayFilter(RedisBackends::failInsteadOfReplay);
        return builder;
    }

    /**
     * Lettuce asks this for each command that was in flight or queued when a connection broke; it fails
     * the command (the caller sees a store failure at once) and keeps it from being sent again after the
     * reconnect, so a lock operation never runs twice or late.
     */
    private static boolean failInsteadOfReplay(RedisCommand<?, ?, ?> command) {
        command.completeExceptionally(new RedisConnectionException(
                "the connection to Redis broke before the reply; the command is not sent again"));
        return true;
    }

    private static void shutdown(io.lettuce.core.AbstractRedisClient client, Duration timeout) {
        try {
            client.shutdown(0, timeout.toMillis(), TimeUnit.MILLISECONDS);
        } catch (RuntimeException e) {
            // Best effort: the shared resources below are released in any case.
        } finally {
            SharedResources.release(timeout);
        }
    }
}
