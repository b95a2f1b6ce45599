package dev.dlock.redis;

import dev.dlock.LockBackendException;
import io.lettuce.core.RedisFuture;
import io.lettuce.core.cluster.models.partitions.RedisClusterNode;
import java.time.Duration;
import java.util.LinkedHashMap;
import java.util.Map;
import java.util.concurrent.CompletionException;
import java.util.concurrent.ExecutionException;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.TimeoutException;

/**
 * Refuses a server whose {@code maxmemory-policy} lets Redis evict lock keys: under a {@code volatile-*}
 * policy the keys of a live hold (they carry a time to live) can vanish under memory pressure, so a
 * second holder is granted while the first one's lease is valid; under {@code allkeys-*} the fencing-token
 * counter can vanish too. Only {@code noeviction} is safe: a write then fails instead, which the engine
 * reports as a store failure.
 *
 * <p>Checked once per backend at connect, on the server (or every Cluster master) with {@code CONFIG GET};
 * a server that refuses the command (an ACL without {@code +config|get}, a renamed command) is logged as
 * a warning and accepted, since the check cannot be made there.
 *
 * <p>Concurrency: stateless. Failure modes: waits at most the operation timeout per server.
 */
final class EvictionCheck {
    private static final System.Logger LOG = System.getLogger(EvictionCheck.class.getName());
    static final String SAFE = "noeviction";

    private EvictionCheck() {}

    /**
     * Throws when a server of {@code connections} evicts; the message names the server, the setting, its
     * value and both ways out.
     */
    static void verify(Connections connections, String description, Duration timeout) {
        Map<String, RedisFuture<Map<String, String>>> answers = new LinkedHashMap<>();
        if (connections.isCluster()) {
            for (RedisClusterNode node : connections.cluster().getPartitions()) {
                if (node.is(RedisClusterNode.NodeFlag.UPSTREAM)) {
                    answers.put(
                            node.getUri().getHost() + ":" + node.getUri().getPort(),
                            connections
                                    .cluster()
                                    .getConnection(node.getNodeId())
                                    .async()
                                    .configGet("maxmemory-policy"));
                }
            }
        } else {
            answers.put(description, connections.commands().configGet("maxmemory-policy"));
        }
        for (var answer : answers.entrySet()) {
            String policy;
            try {
                policy = answer.getValue()
                        .get(timeout.toNanos(), TimeUnit.NANOSECONDS)
                        .get("maxmemory-policy");
            } catch (InterruptedException e) {
                Thread.currentThread().interrupt();
                throw new LockBackendException("interrupted while checking maxmemory-policy of " + answer.getKey(), e);
            } catch (ExecutionException | TimeoutException | CompletionException e) {
                Throwable cause = e.getCause() != null ? e.getCause() : e;
                LOG.log(
                        System.Logger.Level.WARNING,
                        "dlock: cannot read maxmemory-policy of Redis at {0} ({1}); make sure it is noeviction,"
                                + " or lock keys may be evicted under memory pressure",
                        answer.getKey(),
                        cause.toString());
                continue;
            }
            refuseEvicting(answer.getKey(), policy);
        }
    }

    static void refuseEvicting(String server, String policy) {
        if (policy == null || policy.equalsIgnoreCase(SAFE)) {
            return;
        }
        String what = policy.startsWith("allkeys")
                ? "any key, the fencing-token counters included,"
                : "the keys of live holds (they have a time to live)";
        throw new Evicting("Redis at " + server + " has maxmemory-policy '" + policy
                + "': under memory pressure it may evict " + what
                + " and then grant a lock that is still held. Set it to noeviction (CONFIG SET maxmemory-policy"
                + " noeviction, and in redis.conf), or accept the risk explicitly with the URI option"
                + " allowEviction=true (RedisBackends.builder(...).allowEviction(true))");
    }

    /** The refusal of an evicting server. */
    static final class Evicting extends LockBackendException {
        private static final long serialVersionUID = 1L;

        Evicting(String message) {
            super(message);
        }
    }
}
