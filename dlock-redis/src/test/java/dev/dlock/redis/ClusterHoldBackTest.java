package dev.dlock.redis;

import static org.assertj.core.api.Assertions.assertThatThrownBy;

import dev.dlock.Lease;
import dev.dlock.LockClient;
import java.time.Duration;
import java.util.List;
import org.junit.jupiter.api.Test;

/**
 * The hold-back after a lost state in a Redis Cluster, on the default settings but a short declared max
 * lease: a master restarted without its data, and a failover to a replica that missed the grant, grant
 * nothing in the lost slots until the holder was told (or its lease ran out by its own clock).
 */
class ClusterHoldBackTest {
    /** Long enough that, without the hold-back, another client is granted while the holder is valid. */
    private static final Duration LEASE = Duration.ofSeconds(6);

    private static LockClient client(RedisClusterServers cluster) {
        return LockClient.builder(cluster.uri("?maxLease=6s"))
                .leaseTime(LEASE)
                .namespace("told")
                .build();
    }

    @Test
    void aMasterRestartedWithoutItsDataHoldsItsSlotsBackUntilTheHolderWasTold() throws Exception {
        try (RedisClusterServers cluster = RedisClusterServers.start();
                LockClient holder = client(cluster);
                LockClient other = client(cluster)) {
            assertThatThrownBy(other::heldBack)
                    .as("the hold-back is per hash slot: refused per namespace")
                    .isInstanceOf(UnsupportedOperationException.class)
                    .hasMessageContaining("per namespace and hash slot")
                    .hasMessageContaining("describe(name)");
            Lease held = holder.lock("r").acquire(Duration.ofSeconds(20)); // waits out the fresh nodes' hold-back
            RedisServer master = cluster.nodeWithKeys("told:*");
            master.restartEmpty();
            cluster.awaitHealthy();
            HoldBackTest.assertToldBeforeTheNextGrant(held, other);
        }
    }

    /**
     * The replica of the lock's master was down while the lock was granted; the master dies, the replica
     * comes back (with its own older data) and takes the master's slots over.
     */
    @Test
    void aFailoverToAReplicaThatMissedTheGrantHoldsBackUntilTheHolderWasTold() throws Exception {
        try (RedisClusterServers cluster = RedisClusterServers.start();
                LockClient holder = client(cluster);
                LockClient other = client(cluster)) {
            holder.lock("r").acquire(Duration.ofSeconds(20)).close(); // the slot's marker, before the replica
            RedisServer master = cluster.nodeWithKeys("told:*");
            RedisServer replica = cluster.addReplicaOf(master);
            replica.kill();
            Lease held = holder.lock("r").acquire(Duration.ofSeconds(5));
            master.kill();
            replica.restart();
            replica.call("CLUSTER", "FAILOVER", "TAKEOVER");
            RedisSentinelServers.await("the replica did not take the slots over", () -> {
                for (RedisServer node : List.of(
                        replica,
                        cluster.nodes().get(0),
                        cluster.nodes().get(1),
                        cluster.nodes().get(2))) {
                    if (node != master && !((String) node.call("CLUSTER", "INFO")).contains("cluster_state:ok")) {
                        return false;
                    }
                }
                return String.valueOf(replica.call("ROLE")).startsWith("[master");
            });
            HoldBackTest.assertToldBeforeTheNextGrant(held, other);
        }
    }
}
