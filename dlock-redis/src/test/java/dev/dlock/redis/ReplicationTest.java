package dev.dlock.redis;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;

import dev.dlock.Lease;
import dev.dlock.LockBackendException;
import dev.dlock.LockClient;
import java.time.Duration;
import java.util.concurrent.TimeUnit;
import org.junit.jupiter.api.Test;

/** Replicated setups: Sentinel failover, and the optional replica acknowledgement ({@code WAIT}). */
class ReplicationTest {
    private static final String WITHOUT_ACKS = "?unsafeGrantAfterRestart=true&waitReplicas=0";

    /**
     * Replica acknowledgements off ({@code waitReplicas=0}): this set has one replica, and once it is
     * promoted no replica is left to acknowledge, so with the default every grant after the failover
     * would fail until the old master rejoins as a replica ({@link SentinelToldFirstTest} covers that).
     */
    @Test
    void clientFollowsASentinelFailoverAndReplicatedLeasesSurviveIt() throws Exception {
        try (RedisSentinelServers servers = RedisSentinelServers.start();
                LockClient client = LockClient.builder(servers.uri(WITHOUT_ACKS))
                        .leaseTime(Duration.ofSeconds(15))
                        .operationTimeout(Duration.ofSeconds(1))
                        .build()) {
            Lease held = client.lock("held-at-failover").acquire(Duration.ofSeconds(5));
            awaitReplicated(servers);
            int oldMaster = servers.master().port();
            servers.master().kill();
            RedisSentinelServers.await(
                    "the Sentinels did not promote the replica",
                    () -> servers.currentMasterPort() == servers.replica().port());
            assertThat(servers.currentMasterPort()).isNotEqualTo(oldMaster);
            // The same client reaches the new master without being rebuilt.
            Lease after = null;
            long deadline = System.nanoTime() + TimeUnit.SECONDS.toNanos(20);
            while (after == null) {
                try {
                    after = client.lock("after-failover").acquire(Duration.ofSeconds(2));
                } catch (LockBackendException e) {
                    assertThat(System.nanoTime())
                            .as("client followed the failover: " + e)
                            .isLessThan(deadline);
                    Thread.sleep(100);
                }
            }
            assertThat(after.isValid()).isTrue();
            assertThat(String.valueOf(servers.replica().call("ROLE"))).startsWith("[master");
            // The grant made before the failover had been replicated and the failover finished within its
            // lease time: the new master has it, renews it, and nobody else gets the lock.
            assertThat(client.describe("held-at-failover")).hasSize(1);
            try (LockClient other =
                    LockClient.builder(servers.uri(WITHOUT_ACKS)).build()) {
                assertThat(other.lock("held-at-failover").tryAcquire()).isEmpty();
            }
            held.extend(Duration.ofSeconds(15));
            assertThat(held.isValid()).isTrue();
            held.close();
            after.close();
        }
    }

    private static void awaitReplicated(RedisSentinelServers servers) {
        RedisSentinelServers.await("the replica did not catch up", () -> {
            String master = (String) servers.master().call("INFO", "replication");
            String replica = (String) servers.replica().call("INFO", "replication");
            return offset(master, "master_repl_offset:") == offset(replica, "slave_repl_offset:");
        });
    }

    private static long offset(String info, String field) {
        for (String line : info.split("\r\n")) {
            if (line.startsWith(field)) {
                return Long.parseLong(line.substring(field.length()).trim());
            }
        }
        return -1;
    }

    @Test
    void replicaAcknowledgementsAreRequiredForAGrantWhenAskedFor() throws Exception {
        try (RedisServer master = RedisServer.start();
                RedisServer replica = RedisServer.start("--replicaof", "127.0.0.1", Integer.toString(master.port()))) {
            RedisSentinelServers.await("the replica did not sync", () -> ((String) replica.call("INFO", "replication"))
                    .contains("master_link_status:up"));
            String uri = master.uri() + "&waitReplicas=1&waitTimeout=300ms";
            try (LockClient client = LockClient.builder(uri)
                    .leaseTime(Duration.ofSeconds(2))
                    .operationTimeout(Duration.ofSeconds(2))
                    .build()) {
                try (Lease lease = client.lock("acked").acquire(Duration.ofSeconds(5))) {
                    assertThat(lease.isValid()).isTrue();
                    // The replica has the grant as soon as the acquire returned.
                    ResourceKeys keys =
                            ResourceKeys.of(new dev.dlock.spi.LockKey("dlock", "acked", dev.dlock.spi.Mode.EXCLUSIVE));
                    assertThat(replica.call("EXISTS", keys.holders())).isEqualTo(1L);
                }
                // The acknowledged path falls back to EVAL (and WAITs again) when the server lost its scripts.
                master.call("SCRIPT", "FLUSH");
                try (Lease lease = client.lock("acked-after-flush").acquire(Duration.ofSeconds(5))) {
                    assertThat(lease.isValid()).isTrue();
                    ResourceKeys keys = ResourceKeys.of(
                            new dev.dlock.spi.LockKey("dlock", "acked-after-flush", dev.dlock.spi.Mode.EXCLUSIVE));
                    assertThat(replica.call("EXISTS", keys.holders())).isEqualTo(1L);
                }
                replica.kill();
                assertThatThrownBy(() -> client.lock("unacked").acquire(Duration.ofSeconds(5)))
                        .isInstanceOf(LockBackendException.class)
                        .hasMessageContaining("only 0 of the 1 required replicas");
                // The grant was given back, not left behind.
                assertThat(client.describe("unacked")).isEmpty();
            }
        }
    }

    @Test
    void replicaAcknowledgementOptionsAreValidated() {
        assertThatThrownBy(() -> RedisBackends.of("redis://localhost?waitReplicas=1"))
                .isInstanceOf(IllegalArgumentException.class)
                .hasMessageContaining("together");
        assertThatThrownBy(() -> RedisBackends.of("redis://localhost?waitReplicas=0&waitTimeout=1s"))
                .isInstanceOf(IllegalArgumentException.class)
                .hasMessageContaining("waitReplicas");
        assertThatThrownBy(() -> RedisBackends.of("redis-cluster://localhost:7000?waitReplicas=1&waitTimeout=1s"))
                .isInstanceOf(IllegalArgumentException.class)
                .hasMessageContaining("not for Cluster");
        assertThatThrownBy(() -> LockClient.builder("redis://localhost?waitReplicas=1&waitTimeout=5s")
                        .operationTimeout(Duration.ofSeconds(1))
                        .build())
                .isInstanceOf(IllegalArgumentException.class)
                .hasMessageContaining("shorter than the operation timeout");
    }
}
