package dev.dlock.redis;

import java.io.IOException;
import java.util.ArrayList;
import java.util.List;
import java.util.concurrent.TimeUnit;

/**
 * A Redis Cluster of three masters (no replicas) on free ports, built with {@code redis-cli --cluster
 * create}; every node can be killed and restarted with its {@code nodes.conf}, so the Cluster comes back
 * as it was. Needs {@code redis-server} and {@code redis-cli} ({@code apt-get install redis-server
 * redis-tools}).
 */
final class RedisClusterServers implements AutoCloseable {
    private final List<RedisServer> nodes = new ArrayList<>();

    private RedisClusterServers() {}

    static RedisClusterServers start() {
        RedisClusterServers cluster = new RedisClusterServers();
        try {
            for (int i = 0; i < 3; i++) {
                cluster.nodes.add(RedisServer.start(
                        "--cluster-enabled", "yes",
                        "--cluster-config-file", "nodes.conf",
                        "--cluster-node-timeout", "2000",
                        "--appendonly", "yes",
                        "--appendfsync", "everysec"));
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

    /** Waits until every node reports {@code cluster_state:ok} and knows all three masters. */
    void awaitHealthy() {
        long deadline = System.nanoTime() + TimeUnit.SECONDS.toNanos(30);
        while (true) {
            boolean ok = true;
            for (RedisServer node : nodes) {
                try {
                    String info = (String) node.call("CLUSTER", "INFO");
                    ok &= info.contains("cluster_state:ok") && info.contains("cluster_known_nodes:3");
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

    List<RedisServer> nodes() {
        return nodes;
    }

    String uri() {
        StringBuilder b = new StringBuilder("redis-cluster://");
        for (int i = 0; i < nodes.size(); i++) {
            b.append(i == 0 ? "" : ",").append("127.0.0.1:").append(nodes.get(i).port());
        }
        return b.toString();
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
        nodes.forEach(RedisServer::close);
    }
}
