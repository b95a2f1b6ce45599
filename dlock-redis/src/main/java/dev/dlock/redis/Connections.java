package dev.dlock.redis;

import io.lettuce.core.RedisClient;
import io.lettuce.core.RedisURI;
import io.lettuce.core.api.StatefulRedisConnection;
import io.lettuce.core.api.async.RedisAsyncCommands;
import io.lettuce.core.cluster.RedisClusterClient;
import io.lettuce.core.cluster.SlotHash;
import io.lettuce.core.cluster.api.StatefulRedisClusterConnection;
import io.lettuce.core.cluster.api.async.RedisClusterAsyncCommands;
import io.lettuce.core.cluster.models.partitions.RedisClusterNode;
import io.lettuce.core.codec.StringCodec;
import io.lettuce.core.pubsub.StatefulRedisPubSubConnection;
import java.time.Duration;
import java.util.ArrayList;
import java.util.Collection;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.ExecutionException;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.TimeoutException;

/**
 * The Lettuce connections one backend uses: one command connection (multiplexed, shared by every
 * operation of the client), one pub/sub connection shared by every wake-up subscription, and, with
 * replica acknowledgements on, one more connection reserved for grants and renewals followed by {@code
 * WAIT} (a blocking command must not hold up the shared connection).
 *
 * <p>Standalone and Sentinel use a {@link RedisClient}; Cluster a {@link RedisClusterClient}, whose
 * connection routes every command by its first key and follows MOVED/ASK redirects.
 *
 * <p>Concurrency: the connections are thread-safe; this class is immutable after opening.
 *
 * <p>Failure modes: opening blocks at most the connect timeout and closes whatever it opened before
 * failing; {@link #close} waits at most the given timeout per step.
 */
final class Connections {
    private final RedisClusterAsyncCommands<String, String> commands;
    private final StatefulRedisPubSubConnection<String, String> pubSub;
    private final StatefulRedisClusterConnection<String, String> cluster;
    private final StatefulRedisConnection<String, String> acks;
    private final List<io.lettuce.core.api.StatefulConnection<?, ?>> opened;
    private final Runnable afterClose;
    private final FunctionLibrary library;

    private Connections(
            FunctionLibrary library,
            RedisClusterAsyncCommands<String, String> commands,
            StatefulRedisPubSubConnection<String, String> pubSub,
            StatefulRedisClusterConnection<String, String> cluster,
            StatefulRedisConnection<String, String> acks,
            List<io.lettuce.core.api.StatefulConnection<?, ?>> opened,
            Runnable afterClose) {
        this.library = library;
        this.commands = commands;
        this.pubSub = pubSub;
        this.cluster = cluster;
        this.acks = acks;
        this.opened = opened;
        this.afterClose = afterClose;
    }

    /**
     * Opens the connections of a standalone or Sentinel backend.
     *
     * @param uri the server, or null to use the client's default URI
     * @param ackConnection whether to open the extra connection for {@code WAIT}
     * @param afterClose runs after the connections are closed (shuts down an owned client), also when
     *     opening fails
     */
    static Connections standalone(
            RedisClient client, RedisURI uri, Duration timeout, boolean ackConnection, Runnable afterClose) {
        List<io.lettuce.core.api.StatefulConnection<?, ?>> opened = new ArrayList<>();
        try {
            StatefulRedisConnection<String, String> main =
                    uri == null ? client.connect(StringCodec.UTF8) : client.connect(StringCodec.UTF8, uri);
            opened.add(main);
            StatefulRedisPubSubConnection<String, String> pubSub =
                    uri == null ? client.connectPubSub(StringCodec.UTF8) : client.connectPubSub(StringCodec.UTF8, uri);
            opened.add(pubSub);
            StatefulRedisConnection<String, String> acks = null;
            if (ackConnection) {
                acks = uri == null ? client.connect(StringCodec.UTF8) : client.connect(StringCodec.UTF8, uri);
                opened.add(acks);
            }
            for (var connection : opened) {
                connection.setTimeout(timeout);
            }
            preload(main.async(), timeout);
            FunctionLibrary library = FunctionLibrary.loadedOn(main.async(), timeout);
            return new Connections(library, main.async(), pubSub, null, acks, opened, afterClose);
        } catch (RuntimeException e) {
            closeAll(opened, timeout);
            afterClose.run();
            throw e;
        }
    }

    /** Opens the connections of a Cluster backend; see {@link #standalone}. */
    static Connections cluster(RedisClusterClient client, Duration timeout, Runnable afterClose) {
        List<io.lettuce.core.api.StatefulConnection<?, ?>> opened = new ArrayList<>();
        try {
            StatefulRedisClusterConnection<String, String> main = client.connect(StringCodec.UTF8);
            opened.add(main);
            StatefulRedisPubSubConnection<String, String> pubSub = client.connectPubSub(StringCodec.UTF8);
            opened.add(pubSub);
            for (var connection : opened) {
                connection.setTimeout(timeout);
            }
            preload(main.async(), timeout);
            FunctionLibrary library = FunctionLibrary.loadedOnMasters(main, timeout);
            return new Connections(library, main.async(), pubSub, main, null, opened, afterClose);
        } catch (RuntimeException e) {
            closeAll(opened, timeout);
            afterClose.run();
            throw e;
        }
    }

    /**
     * Loads the scripts (on every master of a Cluster) so that the first operation served by a script
     * (where the function library is not usable, or missing on a node) is one EVALSHA, not EVALSHA,
     * NOSCRIPT and EVAL. Best effort: a server that refuses (for example an ACL without {@code SCRIPT}) is
     * served by the EVAL fallback.
     */
    private static void preload(RedisClusterAsyncCommands<String, String> commands, Duration timeout) {
        try {
            for (LuaScript script : new LuaScript[] {LuaScript.DLOCK, LuaScript.EXCLUSIVE}) {
                commands.scriptLoad(script.body()).get(timeout.toNanos(), TimeUnit.NANOSECONDS);
            }
        } catch (InterruptedException e) {
            Thread.currentThread().interrupt();
        } catch (ExecutionException | TimeoutException e) {
            // the EVAL fallback loads it on first use
        }
    }

    /** Whether the server runs dlock's scripts as a function library; every script call asks it. */
    FunctionLibrary library() {
        return library;
    }

    /** Routed commands: in a Cluster, each goes to the master of its first key's slot. */
    RedisClusterAsyncCommands<String, String> commands() {
        return commands;
    }

    StatefulRedisPubSubConnection<String, String> pubSub() {
        return pubSub;
    }

    boolean isCluster() {
        return cluster != null;
    }

    /** The Cluster connection, or null for standalone and Sentinel. */
    StatefulRedisClusterConnection<String, String> cluster() {
        return cluster;
    }

    /** The connection reserved for grants and renewals followed by {@code WAIT}, or null. */
    RedisAsyncCommands<String, String> acks() {
        return acks == null ? null : acks.async();
    }

    /**
     * Groups positions of {@code keys} so that all keys of a group are served by one node, by the client's
     * current view of the Cluster. Standalone: one group.
     */
    Collection<List<Integer>> groupByNode(List<String> keys) {
        if (cluster == null) {
            return List.of(positions(keys.size()));
        }
        Map<String, List<Integer>> groups = new LinkedHashMap<>();
        for (int i = 0; i < keys.size(); i++) {
            int slot = SlotHash.getSlot(keys.get(i));
            RedisClusterNode node = cluster.getPartitions().getMasterBySlot(slot);
            String group = node != null ? node.getNodeId() : "slot:" + slot;
            groups.computeIfAbsent(group, g -> new ArrayList<>()).add(i);
        }
        return groups.values();
    }

    /**
     * The {@code host:port} of the master serving {@code key} by the client's current view of the Cluster,
     * or null outside a Cluster (or when the view has no master for its slot).
     */
    String nodeOf(String key) {
        if (cluster == null) {
            return null;
        }
        RedisClusterNode node = cluster.getPartitions().getMasterBySlot(SlotHash.getSlot(key));
        return node == null || node.getUri() == null
                ? null
                : node.getUri().getHost() + ":" + node.getUri().getPort();
    }

    /** Groups positions of {@code keys} by hash slot (the fallback when a node group failed). */
    Collection<List<Integer>> groupBySlot(List<String> keys) {
        if (cluster == null) {
            return List.of(positions(keys.size()));
        }
        Map<Integer, List<Integer>> groups = new LinkedHashMap<>();
        for (int i = 0; i < keys.size(); i++) {
            groups.computeIfAbsent(SlotHash.getSlot(keys.get(i)), s -> new ArrayList<>())
                    .add(i);
        }
        return groups.values();
    }

    private static List<Integer> positions(int size) {
        List<Integer> all = new ArrayList<>(size);
        for (int i = 0; i < size; i++) {
            all.add(i);
        }
        return all;
    }

    /** Closes every connection (bounded by {@code timeout}), then runs the close hook. */
    void close(Duration timeout) {
        try {
            closeAll(opened, timeout);
        } finally {
            afterClose.run();
        }
    }

    private static void closeAll(List<io.lettuce.core.api.StatefulConnection<?, ?>> connections, Duration timeout) {
        List<CompletableFuture<Void>> closing = new ArrayList<>();
        for (var connection : connections) {
            closing.add(connection.closeAsync());
        }
        try {
            CompletableFuture.allOf(closing.toArray(CompletableFuture[]::new))
                    .get(timeout.toNanos(), TimeUnit.NANOSECONDS);
        } catch (InterruptedException e) {
            Thread.currentThread().interrupt();
        } catch (ExecutionException | TimeoutException e) {
            // Closing is best effort; the client shutdown that follows releases the sockets.
        }
    }
}
