package dev.dlock.zookeeper;

import static org.assertj.core.api.Assertions.assertThat;

import dev.dlock.Lease;
import dev.dlock.LockClient;
import dev.dlock.tck.JavadocExamples;
import java.nio.file.Path;
import java.time.Duration;
import java.util.ArrayList;
import java.util.List;
import java.util.concurrent.TimeUnit;
import org.apache.curator.framework.CuratorFramework;
import org.apache.curator.framework.CuratorFrameworkFactory;
import org.apache.curator.framework.imps.CuratorFrameworkState;
import org.apache.curator.retry.ExponentialBackoffRetry;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.Timeout;

/**
 * The example of {@link ZooKeeperBackends}' class javadoc, run against a server in this JVM; the javadoc
 * holds a copy of the region marked below, and {@link #javadocHoldsTheseExamples()} checks it is the same.
 */
@Timeout(value = 60, unit = TimeUnit.SECONDS)
class ZooKeeperBackendsExamplesTest {
    private final List<Long> reports = new ArrayList<>();
    private String connectString;

    @Test
    void javadocHoldsTheseExamples() {
        assertThat(JavadocExamples.check(
                        Path.of("src/main/java/dev/dlock/zookeeper/ZooKeeperBackends.java"),
                        Path.of("src/test/java/dev/dlock/zookeeper/ZooKeeperBackendsExamplesTest.java")))
                .containsExactly("zookeeper-curator");
    }

    @Test
    void curatorOfTheApplication() throws Exception {
        try (ZooKeeperServers servers = ZooKeeperServers.standalone()) {
            connectString = servers.connectString();
            // example: zookeeper-curator
            CuratorFramework curator =
                    CuratorFrameworkFactory.newClient(connectString, new ExponentialBackoffRetry(100, 3));
            curator.start();
            try (LockClient locks =
                    LockClient.builder(ZooKeeperBackends.of(curator)).build()) {
                try (Lease lease = locks.lock("report").acquire(Duration.ofSeconds(5))) {
                    // the lease lives as long as the ZooKeeper session: see Lease#isValid()
                    writeReport(lease.fencingToken());
                }
            }
            // end example
            assertThat(reports).hasSize(1);
            assertThat(curator.getState())
                    .as("closing the lock client left Curator open")
                    .isEqualTo(CuratorFrameworkState.STARTED);
            curator.close();
        }
    }

    private void writeReport(long fencingToken) {
        try (LockClient other = LockClient.connect("zookeeper://" + connectString)) {
            assertThat(other.lock("report").tryAcquire())
                    .as("held by the example")
                    .isEmpty();
        }
        reports.add(fencingToken);
    }
}
