package dev.dlock.redis;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;

import dev.dlock.Lease;
import dev.dlock.LockBackendException;
import dev.dlock.LockClient;
import java.time.Duration;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.TimeUnit;
import org.junit.jupiter.api.Test;

/**
 * Told first across a Sentinel failover on the default settings (only a short declared max lease, so the
 * test is quick): replica acknowledgements are on by default for Sentinel URIs.
 *
 * <p>The case the hold-back alone does not cover (found by the fault suite's told-first count): the
 * deposed master keeps serving the holder's renewals after the promotion, so the holder believes it holds
 * past the promoted replica's hold-back. Here the Sentinels cannot demote the old master (its {@code
 * REPLICAOF} is denied by an ACL rule, standing for Sentinels cut off from it while the holder still
 * reaches it), and the failover is forced with the old master running. With acknowledgements the holder's
 * renewals there are acknowledged by no replica, fail, and its lease runs out by its own clock before the
 * promoted replica's hold-back ends (and the new master grants only once a replica acknowledges, here the
 * old master once the Sentinels could demote it); without them (the opt-out, and the default before) it
 * renews on and another client is granted while it believes it holds (seen: this test failed so before
 * the default changed).
 */
class SentinelToldFirstTest {
    private static final Duration LEASE = Duration.ofSeconds(3);

    private static LockClient client(String uri) {
        return LockClient.builder(uri)
                .leaseTime(LEASE)
                .operationTimeout(Duration.ofSeconds(1))
                .namespace("told")
                .build();
    }

    @Test
    void aDeposedMasterServingTheHoldersRenewalsDoesNotKeepItBelievingOnTheDefaultUri() throws Exception {
        try (RedisSentinelServers servers = RedisSentinelServers.startReplicatingDirectly();
                LockClient holder = client(servers.uri("?maxLease=3s"))) {
            Lease held = holder.lock("r").acquire(Duration.ofSeconds(20)); // waits out the fresh master's hold-back
            servers.master().call("ACL", "SETUSER", "default", "-replicaof", "-slaveof");
            servers.forceFailover();
            try {
                RedisSentinelServers.await(
                        "the Sentinels did not promote the replica",
                        () -> servers.currentMasterPort() == servers.replica().port());
            } catch (IllegalStateException e) {
                throw new IllegalStateException(e.getMessage() + "; Sentinel log:\n" + servers.sentinelLog(), e);
            }
            // Past the promoted replica's hold-back (max lease + 1%) the Sentinels may demote the old master;
            // until then it serves the holder's renewals. With acknowledgements on, the new master grants
            // only once the old one replicates from it.
            CompletableFuture<Object> roleWhenDemotable = CompletableFuture.supplyAsync(
                    () -> {
                        Object role = servers.master().call("ROLE");
                        servers.master().call("ACL", "SETUSER", "default", "+@all");
                        return role;
                    },
                    CompletableFuture.delayedExecutor(LEASE.toMillis() + 1_000, TimeUnit.MILLISECONDS));
            try (LockClient other = client(servers.uri("?maxLease=3s"))) {
                HoldBackTest.assertToldBeforeTheNextGrant(held, other);
            }
            assertThat(String.valueOf(roleWhenDemotable.get(10, TimeUnit.SECONDS)))
                    .as("the old master was still a master past the hold-back")
                    .startsWith("[master");
        }
    }

    /**
     * With the default, a grant no replica acknowledges within the wait timeout is given back and the
     * acquisition fails with a {@link LockBackendException} naming the replica acknowledgements.
     */
    @Test
    void aGrantNoReplicaAcknowledgesIsGivenBackOnTheDefaultUri() throws Exception {
        try (RedisSentinelServers servers = RedisSentinelServers.start();
                LockClient client = LockClient.builder(servers.uri())
                        .operationTimeout(Duration.ofSeconds(1))
                        .build()) {
            try (Lease lease = client.lock("acked").acquire(Duration.ofSeconds(5))) {
                assertThat(lease.isValid()).isTrue();
            }
            servers.replica().kill();
            assertThatThrownBy(() -> client.lock("unacked").acquire(Duration.ofSeconds(5)))
                    .isInstanceOf(LockBackendException.class)
                    .hasMessageContaining("only 0 of the 1 required replicas acknowledged the grant within 500ms")
                    .hasMessageContaining("replica acknowledgements");
            assertThat(client.describe("unacked"))
                    .as("the grant was given back")
                    .isEmpty();
        }
    }
}
