package dev.dlock.zookeeper;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;

import dev.dlock.Lease;
import dev.dlock.LockBackendException;
import dev.dlock.LockClient;
import dev.dlock.spi.LockKey;
import dev.dlock.spi.Mode;
import java.nio.charset.StandardCharsets;
import java.time.Duration;
import org.apache.curator.framework.CuratorFramework;
import org.apache.curator.framework.CuratorFrameworkFactory;
import org.apache.curator.retry.RetryNTimes;
import org.apache.zookeeper.KeeperException;
import org.junit.jupiter.api.AfterAll;
import org.junit.jupiter.api.BeforeAll;
import org.junit.jupiter.api.Test;

/** Digest authentication from the URI, and ACLs that keep another identity from deleting lock nodes. */
class DigestAclTest {
    private static ZooKeeperServers servers;

    @BeforeAll
    static void startServer() throws Exception {
        servers = ZooKeeperServers.standalone();
    }

    @AfterAll
    static void stopServer() throws Exception {
        servers.close();
    }

    private static CuratorFramework raw(String user, String password) {
        CuratorFrameworkFactory.Builder b = CuratorFrameworkFactory.builder()
                .connectString(servers.connectString())
                .retryPolicy(new RetryNTimes(1, 100));
        if (user != null) {
            b.authorization("digest", (user + ":" + password).getBytes(StandardCharsets.UTF_8));
        }
        CuratorFramework c = b.build();
        c.start();
        return c;
    }

    @Test
    void anotherIdentityCannotDeleteOrTakeTheLocks() throws Exception {
        String owner = "zookeeper://alice:s%40cret@" + servers.connectString() + "/apps";
        String intruder = "zookeeper://mallory:guess@" + servers.connectString() + "/apps";
        try (LockClient alice = LockClient.builder(owner).namespace("acl").build();
                LockClient mallory =
                        LockClient.builder(intruder).namespace("acl").build();
                CuratorFramework malloryRaw = raw("mallory", "guess");
                CuratorFramework anonymous = raw(null, null);
                CuratorFramework aliceRaw = raw("alice", "s@cret")) {
            Lease exclusive = alice.lock("guarded").acquire(Duration.ofSeconds(10));
            Lease fair = alice.fairLock("guarded").acquire(Duration.ofSeconds(10));
            String holder = "/apps" + NodeLayout.resourcePath(new LockKey("acl", "guarded", Mode.EXCLUSIVE));
            String fairDir = "/apps" + NodeLayout.resourcePath(new LockKey("acl", "guarded", Mode.FAIR));
            String fairEntry =
                    fairDir + "/" + anonymous.getChildren().forPath(fairDir).get(0);

            for (CuratorFramework other : new CuratorFramework[] {malloryRaw, anonymous}) {
                for (String path : new String[] {holder, fairEntry}) {
                    assertThatThrownBy(() -> other.delete().forPath(path))
                            .as("%s may not delete %s", other, path)
                            .isInstanceOf(KeeperException.NoAuthException.class);
                }
                assertThat(other.getData().forPath(holder))
                        .as("anybody may read")
                        .isNotEmpty();
            }
            assertThatThrownBy(() -> mallory.lock("guarded").tryAcquire())
                    .isInstanceOf(LockBackendException.class)
                    .hasMessageContaining("NoAuth");
            assertThatThrownBy(() -> mallory.forceRelease("guarded")).isInstanceOf(LockBackendException.class);
            assertThat(exclusive.isValid() && fair.isValid()).isTrue();
            assertThat(aliceRaw.checkExists().forPath(holder)).isNotNull();

            exclusive.close();
            fair.close();
            assertThat(aliceRaw.checkExists().forPath(holder)).isNull();
        }
    }
}
