package dev.dlock.zookeeper;

import static org.assertj.core.api.Assertions.assertThat;

import dev.dlock.Lease;
import dev.dlock.LeaseLostException;
import dev.dlock.LockClient;
import dev.dlock.testsupport.TcpProxy;
import java.time.Duration;
import java.util.List;
import java.util.concurrent.TimeUnit;
import org.apache.curator.framework.CuratorFramework;
import org.apache.curator.framework.CuratorFrameworkFactory;
import org.apache.curator.retry.RetryNTimes;
import org.apache.curator.test.InstanceSpec;
import org.junit.jupiter.api.AfterAll;
import org.junit.jupiter.api.BeforeAll;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.Timeout;

/** Faults on a 3-server ensemble started in this JVM. */
@Timeout(value = 90, unit = TimeUnit.SECONDS)
class EnsembleFaultTest {
    private static final int SESSION_MS = 6_000;
    private static ZooKeeperServers ensemble;

    @BeforeAll
    static void startEnsemble() throws Exception {
        ensemble = ZooKeeperServers.ensemble(3);
    }

    @AfterAll
    static void stopEnsemble() throws Exception {
        ensemble.close();
    }

    private static LockClient client(String hosts, String namespace) {
        return TestClients.builder("zookeeper://" + hosts + "?sessionTimeout=" + SESSION_MS)
                .namespace(namespace)
                .operationTimeout(Duration.ofSeconds(3))
                .build();
    }

    @Test
    void killingTheServerAClientIsConnectedToKeepsItsLock() throws Exception {
        try (LockClient holder = client(ensemble.connectString(), "failover");
                LockClient other = client(ensemble.connectString(), "failover")) {
            Lease lease = holder.lock("survivor").acquire(Duration.ofSeconds(10));
            CuratorFramework curator = TestClients.curator(holder);
            InstanceSpec connected = ensemble.connectedMember(curator);
            ensemble.kill(connected);
            try {
                long deadline = System.nanoTime() + TimeUnit.SECONDS.toNanos(SESSION_MS / 1000);
                while (!reconnectedElsewhere(curator, connected)) {
                    assertThat(System.nanoTime() - deadline)
                            .as("reconnected to another server")
                            .isNegative();
                    Thread.sleep(20);
                }
                Thread.sleep(SESSION_MS); // longer than the session timeout: the session lives on
                assertThat(lease.isValid()).isTrue();
                assertThat(lease.whenLost()).isNotDone();
                assertThat(other.lock("survivor").tryAcquire())
                        .as("the lock survived on the ensemble")
                        .isEmpty();
                lease.close();
                other.lock("survivor").tryAcquire().orElseThrow().close();
            } finally {
                ensemble.restart(connected);
            }
        }
    }

    private static boolean reconnectedElsewhere(CuratorFramework curator, InstanceSpec killed) {
        try {
            return curator.getZookeeperClient().isConnected() && !killed.equals(ensemble.connectedMember(curator));
        } catch (Exception e) {
            return false; // between servers
        }
    }

    @Test
    void aServerSideSessionExpiryLetsAnotherClientAcquireAndTellsTheOldHolder() throws Exception {
        InstanceSpec member = ensemble.members().get(0);
        try (TcpProxy proxy = TcpProxy.start("127.0.0.1", member.getPort());
                CuratorFramework onlyThroughTheProxy = CuratorFrameworkFactory.builder()
                        .connectString("127.0.0.1:" + proxy.port())
                        .sessionTimeoutMs(SESSION_MS)
                        .retryPolicy(new RetryNTimes(3, 100))
                        // Curator would otherwise learn the members' own addresses from the ensemble's
                        // configuration and reconnect around the proxy.
                        .ensembleTracker(false)
                        .build()) {
            onlyThroughTheProxy.start();
            try (LockClient holder = LockClient.builder(
                                    TestClients.recording(ZooKeeperBackends.of(onlyThroughTheProxy)))
                            .namespace("expiry")
                            .build();
                    LockClient other = client(ensemble.connectString(), "expiry")) {
                expireAndRecover(proxy, holder, other);
            }
        }
    }

    private static void expireAndRecover(TcpProxy proxy, LockClient holder, LockClient other) throws Exception {
        Lease lease = holder.lock("expiring").acquire(Duration.ofSeconds(10));
        CuratorFramework curator = TestClients.curator(holder); // while the holder reaches the store
        long sessionId = curator.getZookeeperClient().getZooKeeper().getSessionId();
        long cut = System.nanoTime();
        proxy.cut(); // the holder's heartbeats stop reaching the ensemble: the leader expires the session
        Lease next = other.lock("expiring").acquire(Duration.ofSeconds(30));
        long acquiredAfter = TimeUnit.NANOSECONDS.toMillis(System.nanoTime() - cut);
        assertThat(acquiredAfter)
                .as("acquired once the server expired the holder's session, not before")
                .isGreaterThanOrEqualTo(SESSION_MS - 1_000L);
        assertThat(next.fencingToken()).isGreaterThan(lease.fencingToken());
        assertThat(lease.whenLost())
                .as("the old holder was told before the server expired its session")
                .isDone();
        assertThat(lease.isValid()).isFalse();

        proxy.restore(); // the old holder hears that its session expired and starts a new one
        long deadline = System.nanoTime() + TimeUnit.SECONDS.toNanos(20);
        while (curator.getZookeeperClient().getZooKeeper().getSessionId() == sessionId
                || !curator.getZookeeperClient().isConnected()) {
            assertThat(System.nanoTime() - deadline).as("a new session").isNegative();
            Thread.sleep(50);
        }
        assertThat(holder.lock("expiring").tryAcquire()).isEmpty();
        next.close();
        try (Lease again = holder.lock("expiring").acquire(Duration.ofSeconds(10))) {
            assertThat(again.fencingToken()).isGreaterThan(next.fencingToken());
        }
    }

    @Test
    void losingTheQuorumMakesLeasesLostWithinTheSessionTimeout() throws Exception {
        List<InstanceSpec> members = ensemble.members();
        try (LockClient holder = client(ensemble.connectString(), "quorum")) {
            Lease lease = holder.lock("q").acquire(Duration.ofSeconds(10));
            Lease read = holder.readWriteLock("q").readLock().acquire(Duration.ofSeconds(10));
            long killed = System.nanoTime();
            ensemble.kill(members.get(0));
            ensemble.kill(members.get(1));
            try {
                LeaseLostException signal = lease.whenLost().get(SESSION_MS + 2_000, TimeUnit.MILLISECONDS);
                long lostAfter = TimeUnit.NANOSECONDS.toMillis(System.nanoTime() - killed);
                assertThat(lostAfter).isLessThan(SESSION_MS);
                assertThat(signal).hasMessageContaining("'q'");
                assertThat(read.whenLost()).succeedsWithin(Duration.ofSeconds(1));
                assertThat(lease.isValid()).isFalse();
            } finally {
                ensemble.restart(members.get(0));
                ensemble.restart(members.get(1));
            }
            long deadline = System.nanoTime() + TimeUnit.SECONDS.toNanos(40);
            while (true) {
                try (Lease again = holder.lock("q").acquire(Duration.ofSeconds(5))) {
                    assertThat(again.fencingToken()).isGreaterThan(lease.fencingToken());
                    break;
                } catch (dev.dlock.LockException e) {
                    assertThat(System.nanoTime() - deadline)
                            .as("the client works again once the quorum is back: " + e)
                            .isNegative();
                    Thread.sleep(200);
                }
            }
        }
    }
}
