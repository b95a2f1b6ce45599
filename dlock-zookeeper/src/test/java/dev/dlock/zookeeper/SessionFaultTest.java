package dev.dlock.zookeeper;

import static org.assertj.core.api.Assertions.assertThat;

import dev.dlock.Lease;
import dev.dlock.LeaseLostException;
import dev.dlock.LockClient;
import dev.dlock.tck.TcpProxy;
import java.time.Duration;
import java.util.concurrent.TimeUnit;
import org.junit.jupiter.api.AfterAll;
import org.junit.jupiter.api.BeforeAll;
import org.junit.jupiter.api.Test;

/**
 * Session semantics on a standalone server: a connection suspended for longer than two thirds of the
 * session timeout makes leases invalid and fires their lost signal, and when the same session comes
 * back the nodes the holders gave up for lost are deleted.
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
    void suspensionBeyondTwoThirdsOfTheSessionTimeoutLosesLeasesAndFreesTheirNodes() throws Exception {
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
                    .as("still valid while suspended for less than 2/3 of the session timeout")
                    .isTrue();
            LeaseLostException signal = lease.whenLost().get(SESSION_MS, TimeUnit.MILLISECONDS);
            long lostAfter = TimeUnit.NANOSECONDS.toMillis(System.nanoTime() - cut);
            assertThat(lostAfter).isBetween(SESSION_MS * 2L / 3 - 100, (long) SESSION_MS);
            assertThat(signal).hasMessageContaining("suspended");
            assertThat(permit.whenLost()).succeedsWithin(Duration.ofSeconds(1));
            assertThat(lease.isValid()).isFalse();
            assertThat(holder.heldLeases()).isEmpty();
            assertThat(other.lock("s").tryAcquire())
                    .as("the session still lives on the server")
                    .isEmpty();

            proxy.restore(); // before the server expires the session: the same session comes back
            Lease next = other.lock("s").acquire(Duration.ofSeconds(10));
            long freedAfter = TimeUnit.NANOSECONDS.toMillis(System.nanoTime() - cut);
            assertThat(freedAfter)
                    .as("the holder deleted its node on reconnecting, before its session could expire")
                    .isLessThan(SESSION_MS);
            assertThat(next.fencingToken()).isGreaterThan(lease.fencingToken());
            other.semaphore("p", 1).acquire(Duration.ofSeconds(10)).close();
            next.close();
            holder.lock("s").acquire(Duration.ofSeconds(10)).close();
        }
    }
}
