package dev.dlock.zookeeper;

import static org.assertj.core.api.Assertions.assertThat;

import dev.dlock.Lease;
import dev.dlock.LeaseLostException;
import dev.dlock.LockClient;
import dev.dlock.testsupport.TcpProxy;
import java.time.Duration;
import java.util.concurrent.TimeUnit;
import org.junit.jupiter.api.AfterAll;
import org.junit.jupiter.api.BeforeAll;
import org.junit.jupiter.api.Test;

/**
 * Session semantics on a standalone server: leases become invalid, and their lost signal fires, before
 * the server may expire the session (one session timeout after the last reply the client had), whether
 * the connection breaks or goes silent; when the same session comes back the nodes the holders gave up
 * for lost are deleted.
 */
class SessionFaultTest {
    private static final int SESSION_MS = 9_000;
    private static ZooKeeperServers servers;
    private static TcpProxy proxy;

    @BeforeAll
    static void startServer() throws Exception {
        servers = ZooKeeperServers.standalone();
        String cs = servers.connectString();
        proxy = TcpProxy.start("127.0.0.1", Integer.parseInt(cs.substring(cs.lastIndexOf(':') + 1)));
    }

    @AfterAll
    static void stopServer() throws Exception {
        proxy.close();
        servers.close();
    }

    @Test
    void aCutConnectionLosesLeasesBeforeTheSessionCouldExpireAndFreesTheirNodes() throws Exception {
        try (LockClient holder = LockClient.builder(
                                "zookeeper://127.0.0.1:" + proxy.port() + "?sessionTimeout=" + SESSION_MS)
                        .namespace("suspend")
                        .build();
                LockClient other = LockClient.builder("zookeeper://" + servers.connectString())
                        .namespace("suspend")
                        .build()) {
            Lease lease = holder.lock("s").acquire(Duration.ofSeconds(5));
            Lease permit = holder.semaphore("p", 1).acquire(Duration.ofSeconds(5));
            long cut = System.nanoTime();
            proxy.cut();
            Thread.sleep(SESSION_MS / 3);
            assertThat(lease.isValid())
                    .as("still valid: the last reply was less than 2/3 of the session timeout ago")
                    .isTrue();
            LeaseLostException signal = lease.whenLost().get(SESSION_MS, TimeUnit.MILLISECONDS);
            long lostAfter = TimeUnit.NANOSECONDS.toMillis(System.nanoTime() - cut);
            assertThat(lostAfter)
                    .as("lost once a session timeout (minus a margin) has passed since the last reply")
                    .isBetween(SESSION_MS / 3L, (long) SESSION_MS);
            assertThat(signal).hasMessageContaining("no reply from ZooKeeper");
            assertThat(permit.whenLost()).succeedsWithin(Duration.ofSeconds(1));
            assertThat(lease.isValid()).isFalse();
            assertThat(holder.heldLeases()).isEmpty();
            assertThat(other.lock("s").tryAcquire())
                    .as("the session still lives on the server")
                    .isEmpty();

            // The holder deletes its nodes if the same session comes back; else the server expires it.
            proxy.restore();
            Lease next = other.lock("s").acquire(Duration.ofSeconds(10));
            assertThat(next.fencingToken()).isGreaterThan(lease.fencingToken());
            other.semaphore("p", 1).acquire(Duration.ofSeconds(10)).close();
            next.close();
            holder.lock("s").acquire(Duration.ofSeconds(10)).close();
        }
    }

    @Test
    void aSilentNetworkMakesTheLeaseInvalidBeforeAnotherClientIsGranted() throws Exception {
        int sessionMs = 3_000;
        try (LockClient holder = LockClient.builder(
                                "zookeeper://127.0.0.1:" + proxy.port() + "?sessionTimeout=" + sessionMs)
                        .namespace("silent")
                        .build();
                LockClient other = LockClient.builder("zookeeper://" + servers.connectString())
                        .namespace("silent")
                        .build()) {
            Lease lease = holder.lock("s").acquire(Duration.ofSeconds(5));
            Lease permit = holder.semaphore("p", 1).acquire(Duration.ofSeconds(5));
            proxy.freeze(); // sockets stay open, nothing gets through: only timeouts can tell
            try {
                Lease next = other.lock("s").acquire(Duration.ofSeconds(30));
                assertThat(lease.isValid())
                        .as("the old holder's lease is invalid by the time the server lets another client in")
                        .isFalse();
                Lease nextPermit = other.semaphore("p", 1).acquire(Duration.ofSeconds(30));
                assertThat(permit.isValid()).isFalse();
                assertThat(lease.whenLost()).succeedsWithin(Duration.ofSeconds(2));
                assertThat(next.fencingToken()).isGreaterThan(lease.fencingToken());
                next.close();
                nextPermit.close();
            } finally {
                proxy.restore();
            }
            holder.lock("s").acquire(Duration.ofSeconds(20)).close(); // works again in a new session
        }
    }
}
