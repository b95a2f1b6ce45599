package dev.dlock.testsupport;

import static org.assertj.core.api.Assertions.assertThat;

import dev.dlock.testsupport.EtcdServers.Member;
import java.util.concurrent.TimeUnit;
import org.junit.jupiter.api.Test;

/** {@link EtcdServers}: a cluster on another address, freeze and thaw, kill and start without waiting. */
class EtcdServersTest {

    @Test
    void aClusterOnAnotherAddressSurvivesAFrozenAndAKilledMember() throws Exception {
        try (EtcdServers cluster = EtcdServers.cluster("127.0.0.2")) {
            assertThat(cluster.hosts()).startsWith("127.0.0.2:").contains(",127.0.0.2:");
            Member leader = cluster.leader();
            assertThat(cluster.leaderNow()).isEqualTo(leader);
            assertThat(status(cluster, leader)).contains("\"leader\"");

            cluster.freeze(leader);
            assertThat(status(cluster, leader))
                    .as("a frozen member answers nothing")
                    .isNull();
            assertThat(leader.alive()).isTrue();
            cluster.thaw(leader);
            assertThat(eventually(() -> status(cluster, leader) != null)).isTrue();

            Member killed = cluster.members().get(0);
            cluster.kill(killed);
            assertThat(killed.alive()).isFalse();
            assertThat(status(cluster, killed)).isNull();
            cluster.start(killed);
            assertThat(eventually(() -> status(cluster, killed) != null))
                    .as("a member started again answers")
                    .isTrue();
        }
    }

    private static String status(EtcdServers cluster, Member m) throws InterruptedException {
        return cluster.post(m, "/v3/maintenance/status", "{}");
    }

    private interface Check {
        boolean holds() throws Exception;
    }

    private static boolean eventually(Check check) throws Exception {
        long deadline = System.nanoTime() + TimeUnit.SECONDS.toNanos(30);
        while (!check.holds()) {
            if (System.nanoTime() - deadline > 0) {
                return false;
            }
            Thread.sleep(50);
        }
        return true;
    }
}
