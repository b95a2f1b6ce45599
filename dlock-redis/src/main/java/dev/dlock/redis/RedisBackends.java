package dev.dlock.redis;

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
import java.util.ArrayList;
import java.util.List;
import java.util.Objects;
import java.util.concurrent.TimeUnit;

/**
 * Factories for the Redis backend, from a URI or from a Lettuce client the application already has.
 *
 * <h2>From a URI</h2>
 *
 * <p>{@code LockClient.connect("redis://localhost:6379")} finds this backend by its scheme; {@link
 * #uri(String)} does the same explicitly. The backend then owns its Lettuce client: command timeouts and
 * the connect timeout are the lock client's operation timeout, a dead server makes commands fail at once
 * instead of queueing them, the client reconnects by itself (backing off up to 1 s), and lock commands
 * in flight when a connection breaks are failed, never replayed. URI syntax: see {@link
 * RedisBackendProvider}.
 *
 * <h2>From a Lettuce client</h2>
 *
 * <pre>{@code
 * RedisClient redis = RedisClient.create("redis://localhost:6379");
 * try (LockClient locks = LockClient.builder(RedisBackends.of(redis)).build()) {
 *     ...
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
     * A factory for the servers a URI names.
     *
     * @param uri a {@code redis://}, {@code rediss://}, {@code redis-sentinel://}, {@code rediss-sentinel://},
     *     {@code redis-cluster://} or {@code rediss-cluster://} URI
     * @return a factory; nothing connects until it is opened
     * @throws IllegalArgumentException naming what is wrong with the URI
     */
    public static RedisBackendFactory uri(String uri) {
        RedisUris.Parsed parsed = RedisUris.parse(uri);
        if (parsed.topology() == RedisUris.Topology.REDLOCK) {
            throw new IllegalArgumentException("'" + RedisUris.redact(uri)
                    + "' is a Redlock URI: use RedisBackends.redlock(String) or LockClient.connect");
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
                        parsed.allowEviction())
                : new RedisBackendFactory(
                        (timeout, acks) ->
                                openStandalone(RedisUris.parse(uri).servers().get(0), timeout, acks),
                        description,
                        false,
                        0,
                        null,
                        parsed.allowEviction());
        return parsed.replicaAcks() > 0
                ? factory.withReplicaAcks(parsed.replicaAcks(), parsed.replicaAckTimeout())
                : factory;
    }

    /**
     * A factory that opens connections from an existing standalone or Sentinel client.
     *
     * @param client a client created with a default URI; stays owned by the caller
     * @return a factory
     */
    public static RedisBackendFactory of(RedisClient client) {
        Objects.requireNonNull(client, "client must not be null");
        return new RedisBackendFactory(
                (timeout, acks) -> Connections.standalone(client, null, timeout, acks, () -> {}),
                "a RedisClient",
                false,
                0,
                null,
                false);
    }

    /**
     * A factory that opens connections from an existing Cluster client.
     *
     * @param client a Cluster client; stays owned by the caller
     * @return a factory
     */
    public static RedisBackendFactory of(RedisClusterClient client) {
        Objects.requireNonNull(client, "client must not be null");
        return new RedisBackendFactory(
                (timeout, acks) -> Connections.cluster(client, timeout, () -> {}),
                "a RedisClusterClient",
                true,
                0,
                null,
                false);
    }

    /**
     * A Redlock factory for the masters a {@code redlock://} or {@code redlocks://} URI names.
     *
     * @param uri {@code redlock://[[user:]password@]host:port,host:port,host:port[/database][?options]}
     * @return a factory; nothing connects until it is opened
     * @throws IllegalArgumentException naming what is wrong with the URI, or when it names fewer than 3
     *     masters or an even number of them
     */
    public static RedlockBackendFactory redlock(String uri) {
        RedisUris.Parsed parsed = RedisUris.parse(uri);
        if (parsed.topology() != RedisUris.Topology.REDLOCK) {
            throw new IllegalArgumentException(
                    "not a Redlock URI: '" + RedisUris.redact(uri) + "'; expected redlock:// or redlocks://");
        }
        List<String> names = new ArrayList<>();
        List<RedisBackendFactory> masters = new ArrayList<>();
        for (int i = 0; i < parsed.servers().size(); i++) {
            int index = i;
            RedisURI server = parsed.servers().get(i);
            String name = server.getHost() + ":" + server.getPort();
            names.add(name);
            masters.add(new RedisBackendFactory(
                    (timeout, acks) ->
                            openStandalone(RedisUris.parse(uri).servers().get(index), timeout, false),
                    name,
                    false,
                    0,
                    null,
                    false));
        }
        RedlockBackendFactory factory = new RedlockBackendFactory(names, masters, false, null, null);
        if (parsed.allowEviction()) {
            factory = factory.allowingEviction();
        }
        if (parsed.minUptime() != null) {
            factory = factory.withMinUptime(parsed.minUptime());
        }
        if (parsed.masterTimeout() != null) {
            factory = factory.withMasterTimeout(parsed.masterTimeout());
        }
        return factory;
    }

    /**
     * A Redlock factory over existing standalone clients, one per independent master (each with a
     * default URI). The clients stay owned by the caller, as with {@link #of(RedisClient)}.
     *
     * @param masters at least 3 clients, an odd number of them
     * @return a factory
     * @throws IllegalArgumentException for fewer than 3 clients or an even number of them
     */
    public static RedlockBackendFactory redlock(RedisClient... masters) {
        Objects.requireNonNull(masters, "masters must not be null");
        RedlockBackendFactory.checkMasterCount(masters.length);
        List<String> names = new ArrayList<>();
        List<RedisBackendFactory> factories = new ArrayList<>();
        for (int i = 0; i < masters.length; i++) {
            names.add("master " + (i + 1));
            factories.add(of(Objects.requireNonNull(masters[i], "master " + (i + 1) + " must not be null")));
        }
        return new RedlockBackendFactory(names, factories, false, null, null);
    }

    private static Connections openStandalone(RedisURI server, Duration timeout, boolean acks) {
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
                .timeoutOptions(TimeoutOptions.enabled(timeout))
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
