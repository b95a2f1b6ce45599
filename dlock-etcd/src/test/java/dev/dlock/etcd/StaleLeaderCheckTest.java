package dev.dlock.etcd;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;

import dev.dlock.Lease;
import dev.dlock.LockClient;
import dev.dlock.testsupport.EtcdServers;
import io.etcd.jetcd.ByteSequence;
import io.etcd.jetcd.Client;
import java.nio.charset.StandardCharsets;
import java.time.Duration;
import java.util.concurrent.TimeUnit;
import org.junit.jupiter.api.AfterAll;
import org.junit.jupiter.api.BeforeAll;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.Timeout;

/**
 * A cluster whose members may revoke live leases after a leader stall (etcd-io/etcd#15247) is refused at
 * open unless the application accepts it; a single member is not checked. The refusal is asserted against
 * whatever etcd this machine runs: Debian 12's 3.4.23 is affected, a fixed one must be accepted.
 */
@Timeout(value = 120, unit = TimeUnit.SECONDS)
class StaleLeaderCheckTest {
    private static EtcdServers cluster;
    private static String version;

    @BeforeAll
    static void startCluster() throws Exception {
        cluster = EtcdServers.cluster();
        JetcdWarmUp.once(cluster.member(0).clientUrl());
        try (Client etcd =
                Client.builder().endpoints(cluster.member(0).clientUrl()).build()) {
            version = etcd.getMaintenanceClient()
                    .statusMember("127.0.0.1:" + cluster.member(1).clientPort())
                    .get(10, TimeUnit.SECONDS)
                    .getVersion();
        }
    }

    @AfterAll
    static void stopCluster() {
        cluster.close();
    }

    @Test
    void versionsBeforeTheFixOnEachLineAreTheAffectedOnes() {
        assertThat(StaleLeaderCheck.revokesAfterStall("3.4.23")).isTrue();
        assertThat(StaleLeaderCheck.revokesAfterStall("3.4.30")).isTrue();
        assertThat(StaleLeaderCheck.revokesAfterStall("3.4.31")).isFalse();
        assertThat(StaleLeaderCheck.revokesAfterStall("3.5.12")).isTrue();
        assertThat(StaleLeaderCheck.revokesAfterStall("3.5.13")).isFalse();
        assertThat(StaleLeaderCheck.revokesAfterStall("3.5.21")).isFalse();
        assertThat(StaleLeaderCheck.revokesAfterStall("3.6.0-rc.1")).isFalse();
        assertThat(StaleLeaderCheck.revokesAfterStall("3.3.27")).isTrue();
        assertThat(StaleLeaderCheck.revokesAfterStall("2.3.8")).isTrue();
        assertThat(StaleLeaderCheck.revokesAfterStall("4.0.0")).isFalse();
        assertThat(StaleLeaderCheck.revokesAfterStall("not-a-version")).isNull();
        assertThat(StaleLeaderCheck.revokesAfterStall(null)).isNull();
    }

    @Test
    void aClusterOnAnAffectedVersionIsRefusedNamingTheIssueAndBothWaysOut() {
        String uri = "etcd://" + cluster.hosts();
        if (Boolean.TRUE.equals(StaleLeaderCheck.revokesAfterStall(version))) {
            assertThatThrownBy(() -> LockClient.connect(uri))
                    .isInstanceOf(StaleLeaderCheck.Affected.class)
                    .hasMessageContaining("runs " + version)
                    .hasMessageContaining("etcd-io/etcd#15247")
                    .hasMessageContaining("3.4.31, 3.5.13 or later")
                    .hasMessageContaining("allowStaleLeaderRevoke=true");
        } else {
            try (LockClient client = LockClient.connect(uri)) {
                assertThat(client.lock("x").tryAcquire()).isPresent();
            }
        }
    }

    @Test
    void aJetcdClientOfTheApplicationIsCheckedToo() throws Exception {
        try (Client etcd =
                Client.builder().endpoints(cluster.member(0).clientUrl()).build()) {
            if (Boolean.TRUE.equals(StaleLeaderCheck.revokesAfterStall(version))) {
                assertThatThrownBy(
                                () -> LockClient.builder(EtcdBackends.of(etcd)).build())
                        .isInstanceOf(StaleLeaderCheck.Affected.class);
            }
            try (LockClient client = LockClient.builder(EtcdBackends.allowingStaleLeaderRevoke(etcd))
                    .build()) {
                assertThat(client.lock("x").tryAcquire()).isPresent();
            }
            assertThat(etcd.getKVClient()
                            .get(ByteSequence.from("any", StandardCharsets.UTF_8))
                            .get(10, TimeUnit.SECONDS)
                            .getKvs())
                    .as("the application's client stays open after a refusal and a close")
                    .isEmpty();
        }
    }

    /**
     * A member that does not answer is accepted with a warning, not waited for past the operation timeout:
     * the live members decide (refused here when they run an affected version).
     */
    @Test
    void aMemberThatDoesNotAnswerIsSkippedWithinTheOperationTimeout() throws Exception {
        try (EtcdServers three = EtcdServers.cluster()) {
            three.kill(three.member(2));
            String live = "127.0.0.1:" + three.member(0).clientPort() + ",127.0.0.1:"
                    + three.member(1).clientPort();
            Duration timeout = Duration.ofSeconds(2);
            long start = System.nanoTime();
            if (Boolean.TRUE.equals(StaleLeaderCheck.revokesAfterStall(version))) {
                assertThatThrownBy(() -> LockClient.builder("etcd://" + live)
                                .operationTimeout(timeout)
                                .build())
                        .isInstanceOf(StaleLeaderCheck.Affected.class)
                        .hasMessageContaining(three.member(0).name() + " (")
                        .hasMessageContaining(three.member(1).name() + " (")
                        .hasMessageNotContaining(three.member(2).name() + " (");
            } else {
                try (LockClient client = LockClient.builder("etcd://" + live)
                        .operationTimeout(timeout)
                        .build()) {
                    assertThat(client.lock("x").tryAcquire()).isPresent();
                }
            }
            assertThat(Duration.ofNanos(System.nanoTime() - start))
                    .as("the dead member is given up on within the operation timeout (both checks)")
                    .isLessThan(timeout.multipliedBy(2).plusSeconds(3));
        }
    }

    @Test
    void theUriOptOutAcceptsTheClusterAndItsLocksWork() {
        try (LockClient client = LockClient.connect("etcd://" + cluster.hosts() + "?allowStaleLeaderRevoke=true");
                Lease lease = client.lock("x").acquire(Duration.ofSeconds(5))) {
            assertThat(lease.isValid()).isTrue();
        }
    }

    @Test
    void aSingleMemberHasNoOtherLeaderAndIsNotChecked() throws Exception {
        try (EtcdServers single = EtcdServers.single();
                LockClient client = LockClient.connect("etcd://" + single.hosts());
                Lease lease = client.lock("x").acquire(Duration.ofSeconds(5))) {
            assertThat(lease.isValid()).isTrue();
        }
    }
}
