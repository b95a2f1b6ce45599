package dev.dlock.redis;

import java.io.IOException;
import java.util.ArrayList;
import java.util.List;
import java.util.concurrent.TimeUnit;

/**
 * A Redis Cluster of three masters on free ports, built with {@code redis-cli --cluster create}, plus the
 * replicas a test adds ({@link #addReplicaOf}); every node can be killed and restarted with its {@code nodes.conf}, so the Cluster comes back
 * as it was. Needs {@code redis-server} and {@code redis-cli} ({@code apt-get install redis-server
 * redis-tools}).
 */
final class RedisClusterServers implements AutoCloseable {
    private static final String[] NODE_ARGS = {
        "--cluster-enabled", "yes",
        "--cluster-config-file", "nodes.conf",
        "--cluster-node-timeout", "2000",
        "--appendonly", "yes",
        "--appendfsync", "everysec"
    };

    private final List<RedisServer> nodes = new ArrayList<>();
    private final List<RedisServer> replicas = new ArrayList<>();

    private RedisClusterServers() {}

    static RedisClusterServers start() {
        RedisClusterServers cluster = new RedisClusterServers();
        try {
            for (int i = 0; i < 3; i++) {
                cluster.nodes.add(RedisServer.start(NODE_ARGS));
            }
            List<String> command = new ArrayList<>(List.of("redis-cli", "--cluster", "create"));
            for (RedisServer node : cluster.nodes) {
                command.add("127.0.0.1:" + node.port());
            }
            command.addAll(List.of("--cluster-replicas", "0", "--cluster-yes"));
            Process create =
                    new ProcessBuilder(command).redirectErrorStream(true).start();
            String output = new String(create.getInputStream().readAllBytes());
            if (!create.waitFor(60, TimeUnit.SECONDS) || create.exitValue() != 0) {
                throw new IllegalStateException("redis-cli --cluster create failed: " + output);
            }
            cluster.awaitHealthy();
            return cluster;
        } catch (IOException e) {
            cluster.close();
            throw new IllegalStateException(
                    "cannot run redis-cli: install it (apt-get install redis-tools, as scripts/test.sh does)", e);
        } catch (InterruptedException e) {
            cluster.close();
            Thread.currentThread().interrupt();
            throw new IllegalStateException(e);
        } catch (RuntimeException e) {
            cluster.close();
            throw e;
        }
    }

    /** Waits until every node reports {@code cluster_state:ok} and knows every node. */
    void awaitHealthy() {
        long deadline = System.nanoTime() + TimeUnit.SECONDS.toNanos(30);
        List<RedisServer> all = new ArrayList<>(nodes);
        all.addAll(replicas);
        while (true) {
            boolean ok = true;
            for (RedisServer node : all) {
                try {
                    String info = (String) node.call("CLUSTER", "INFO");
                    ok &= info.contains("cluster_state:ok") && info.contains("cluster_known_nodes:" + all.size());
                } catch (RuntimeException e) {
                    ok = false;
                }
            }
            if (ok) {
                return;
            }
            if (System.nanoTime() > deadline) {
                throw new IllegalStateException(
                        "the Cluster did not become healthy: " + nodes.get(0).log());
            }
            RedisServer.sleep(50);
        }
    }

    /**
     * Starts one more node, makes it a replica of {@code master} and returns it once it has synced. Its
     * data survives a restart (AOF), as the masters' does.
     */
    RedisServer addReplicaOf(RedisServer master) {
        RedisServer replica = RedisServer.start(NODE_ARGS);
        replicas.add(replica);
        String masterId = (String) master.call("CLUSTER", "MYID");
        replica.call("CLUSTER", "MEET", "127.0.0.1", Integer.toString(master.port()));
        RedisSentinelServers.await(
                "the new node did not learn the Cluster",
                () -> ((String) replica.call("CLUSTER", "NODES")).contains(masterId));
        replica.call("CLUSTER", "REPLICATE", masterId);
        RedisSentinelServers.await("the new replica did not sync", () -> ((String) replica.call("INFO", "replication"))
                .contains("master_link_status:up"));
        awaitHealthy();
        return replica;
    }

    List<RedisServer> nodes() {
        return nodes;
    }

    /**
     * The Cluster URI without the hold-back after a lost state: a fresh Cluster's nodes would hold each
     * slot's first grant back until they have been up for the max lease (30 s).
     */
    String uri() {
        return uri("?unsafeGrantAfterRestart=true");
    }

    /** The Cluster URI with {@code query} (starting with {@code ?}) appended. */
    String uri(String query) {
        StringBuilder b = new StringBuilder("redis-cluster://");
        for (int i = 0; i < nodes.size(); i++) {
            b.append(i == 0 ? "" : ",").append("127.0.0.1:").append(nodes.get(i).port());
        }
        return b.append(query).toString();
    }

    /** The node whose keys match {@code pattern} ({@code KEYS}); fails unless exactly one has any. */
    RedisServer nodeWithKeys(String pattern) {
        List<RedisServer> found = new ArrayList<>();
        for (RedisServer node : nodes) {
            if (!((List<?>) node.call("KEYS", pattern)).isEmpty()) {
                found.add(node);
            }
        }
        if (found.size() != 1) {
            throw new IllegalStateException(found.size() + " nodes have keys matching " + pattern);
        }
        return found.get(0);
    }

    void killAll() {
        nodes.forEach(RedisServer::kill);
    }

    void restartAll() {
        nodes.forEach(RedisServer::restart);
        awaitHealthy();
    }

    @Override
    public void close() {
        replicas.forEach(RedisServer::close);
        nodes.forEach(RedisServer::close);
    }
}
