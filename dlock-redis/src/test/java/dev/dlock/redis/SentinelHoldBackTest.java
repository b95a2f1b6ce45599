package dev.dlock.redis;

import static org.assertj.core.api.Assertions.assertThat;

import dev.dlock.Lease;
import dev.dlock.LockClient;
import java.time.Duration;
import org.junit.jupiter.api.Test;

/**
 * The hold-back after a Sentinel failover to a replica that missed the grant, with replica
 * acknowledgements turned off ({@code waitReplicas=0}: asynchronous replication, no {@code WAIT}; with the
 * default a grant the replica missed is not kept, see {@link SentinelToldFirstTest}) and a short declared
 * max lease: the promoted replica grants nothing until the holder was told (or its lease ran out by its
 * own clock).
 */
class SentinelHoldBackTest {
    /** Long enough that, without the hold-back, another client is granted while the holder is valid. */
    private static final Duration LEASE = Duration.ofSeconds(6);

    private static LockClient client(RedisSentinelServers servers) {
        return LockClient.builder(servers.uri("?maxLease=6s&waitReplicas=0"))
                .leaseTime(LEASE)
                .operationTimeout(Duration.ofSeconds(1))
                .namespace("told")
                .build();
    }

    /** The replica missed the namespace's first grant, and so the marker written with it. */
    @Test
    void aReplicaThatMissedTheNamespacesFirstGrantHoldsBackOncePromoted() throws Exception {
        try (RedisSentinelServers servers = RedisSentinelServers.start();
                LockClient holder = client(servers);
                LockClient other = client(servers)) {
            servers.replicationLink().freeze();
            Lease held = holder.lock("r").acquire(Duration.ofSeconds(20)); // waits out the fresh master's hold-back
            assertThat(servers.replica().call("EXISTS", ResourceKeys.epoch("told")))
                    .as("the replica missed the marker")
                    .isEqualTo(0L);
            failOver(servers);
            HoldBackTest.assertToldBeforeTheNextGrant(held, other);
        }
    }

    /** The replica has the namespace's marker (an earlier grant) but missed the holder's grant. */
    @Test
    void aReplicaThatMissedALaterGrantHoldsBackOncePromoted() throws Exception {
        try (RedisSentinelServers servers = RedisSentinelServers.start();
                LockClient holder = client(servers);
                LockClient other = client(servers)) {
            holder.lock("earlier").acquire(Duration.ofSeconds(20)).close();
            RedisSentinelServers.await("the replica did not receive the marker", () -> Long.valueOf(1)
                    .equals(servers.replica().call("EXISTS", ResourceKeys.epoch("told"))));
            servers.replicationLink().freeze();
            Lease held = holder.lock("r").acquire(Duration.ofSeconds(5));
            failOver(servers);
            HoldBackTest.assertToldBeforeTheNextGrant(held, other);
        }
    }

    private static void failOver(RedisSentinelServers servers) {
        servers.master().kill();
        RedisSentinelServers.await(
                "the Sentinels did not promote the replica",
                () -> servers.currentMasterPort() == servers.replica().port());
    }
}
