package dev.dlock.zookeeper;

import static org.assertj.core.api.Assertions.assertThat;

import dev.dlock.LockBackendException;
import dev.dlock.spi.AcquireRequest;
import dev.dlock.spi.AcquireResult;
import dev.dlock.spi.BackendContext;
import dev.dlock.spi.LockBackend;
import dev.dlock.spi.LockKey;
import dev.dlock.spi.Mode;
import dev.dlock.testsupport.TcpProxy;
import java.nio.ByteBuffer;
import java.time.Duration;
import java.util.ArrayList;
import java.util.List;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.CountDownLatch;
import java.util.concurrent.ExecutionException;
import java.util.concurrent.ThreadLocalRandom;
import java.util.concurrent.TimeUnit;
import org.apache.curator.framework.CuratorFramework;
import org.apache.curator.framework.CuratorFrameworkFactory;
import org.apache.curator.retry.RetryNTimes;
import org.apache.zookeeper.KeeperException;
import org.apache.zookeeper.ZooDefs;
import org.junit.jupiter.api.AfterAll;
import org.junit.jupiter.api.AfterEach;
import org.junit.jupiter.api.BeforeAll;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.Timeout;

/**
 * A force-release of an exclusive lock whose holder changes between the operator's read of the node and
 * its delete. The operator's client talks to the server through a {@link TcpProxy} whose tap holds its
 * transaction back until the test has let the holder go and another client take the lock, so the race is
 * the same every run. And a downgrade taken while its holder's client has not yet seen that its write
 * hold was force-released (the tap holds back the client's check of its node).
 */
@Timeout(value = 60, unit = TimeUnit.SECONDS)
class ForceReleaseRaceTest {
    private static ZooKeeperServers servers;

    private final List<AutoCloseable> closeables = new ArrayList<>();
    private final String namespace =
            "fr" + Long.toHexString(ThreadLocalRandom.current().nextLong() & 0xffffffL);

    @BeforeAll
    static void startServer() throws Exception {
        servers = ZooKeeperServers.standalone();
    }

    @AfterAll
    static void stopServer() throws Exception {
        servers.close();
    }

    @AfterEach
    void closeAll() throws Exception {
        for (int i = closeables.size() - 1; i >= 0; i--) {
            closeables.get(i).close();
        }
    }

    /** Holds back the first request of one kind sent through the proxy once armed, until let go. */
    private static final class HoldBackRequest implements TcpProxy.Tap {
        final int opCode;
        volatile boolean armed;
        final CountDownLatch held = new CountDownLatch(1);
        final CountDownLatch letGo = new CountDownLatch(1);

        HoldBackRequest(int opCode) {
            this.opCode = opCode;
        }

        @Override
        public void clientBytes(byte[] buffer, int offset, int length) {
            if (!armed || !contains(buffer, offset, length)) {
                return;
            }
            armed = false;
            held.countDown();
            try {
                letGo.await(20, TimeUnit.SECONDS);
            } catch (InterruptedException e) {
                Thread.currentThread().interrupt();
            }
        }

        /** Whether a chunk holds a request frame (length, xid, op code) of the kind; small ones arrive whole. */
        private boolean contains(byte[] buffer, int offset, int length) {
            ByteBuffer frames = ByteBuffer.wrap(buffer, offset, length);
            for (int at = offset; at + 12 <= offset + length; at += 4 + frames.getInt(at)) {
                if (frames.getInt(at + 8) == opCode) {
                    return true;
                }
                if (frames.getInt(at) < 8) {
                    return false;
                }
            }
            return false;
        }
    }

    private CuratorFramework curator(String connectString) {
        CuratorFramework c = CuratorFrameworkFactory.builder()
                .connectString(connectString)
                .sessionTimeoutMs(30_000)
                .retryPolicy(new RetryNTimes(3, 100))
                .build();
        c.start();
        closeables.add(c);
        return c;
    }

    private LockBackend backend(CuratorFramework curator) {
        LockBackend b =
                ZooKeeperBackends.of(curator).open(new BackendContext(null, Duration.ofSeconds(5), reason -> {}));
        closeables.add(b);
        return b;
    }

    private static AcquireResult attempt(LockBackend b, LockKey key, String owner) throws Exception {
        return b.acquire(new AcquireRequest(key, owner, 30_000, 1, 0, null))
                .toCompletableFuture()
                .get(5, TimeUnit.SECONDS);
    }

    @Test
    void aHolderChangingDuringAForceReleaseLeavesNoGuardThatALateReleaseCouldUse() throws Exception {
        CuratorFramework inspector = curator(servers.connectString());
        LockBackend first = backend(curator(servers.connectString()));
        LockBackend second = backend(curator(servers.connectString()));
        LockBackend third = backend(curator(servers.connectString()));
        HoldBackRequest tap = new HoldBackRequest(ZooDefs.OpCode.multi);
        String[] hostPort = servers.connectString().split(":");
        TcpProxy proxy = TcpProxy.start(hostPort[0], Integer.parseInt(hostPort[1]), () -> tap);
        closeables.add(proxy);
        CuratorFramework operatorCurator = curator("127.0.0.1:" + proxy.port());
        operatorCurator.blockUntilConnected(10, TimeUnit.SECONDS);
        LockBackend operator = backend(operatorCurator);
        LockKey key = new LockKey(namespace, "raced", Mode.EXCLUSIVE);
        String path = NodeLayout.resourcePath(key);

        assertThat(attempt(first, key, "first").isGranted()).isTrue();
        tap.armed = true;
        CompletableFuture<Boolean> forced = operator.forceRelease(key).toCompletableFuture();
        assertThat(tap.held.await(10, TimeUnit.SECONDS))
                .as("the operator read the node (holder 'first') and sent its delete")
                .isTrue();
        // Before the operator's delete arrives, the holder it read lets go and another client takes the lock.
        assertThat(first.release(key, "first").toCompletableFuture().get(5, TimeUnit.SECONDS))
                .isTrue();
        assertThat(attempt(second, key, "second").isGranted()).isTrue();
        tap.letGo.countDown();
        assertThat(forced.get(10, TimeUnit.SECONDS))
                .as("the force-release removed the holder it found")
                .isTrue();

        assertThat(inspector.checkExists().forPath(path)).as("no holder node").isNull();
        assertThat(inspector.checkExists().forPath(NodeLayout.guardPath(path, "second")))
                .as("the removed holder's guard went with its node")
                .isNull();
        // What a guard left behind would allow: the removed holder's release, sent before its watch told it,
        // deleting the next holder's node. Here its client has seen the deletion, so the release is not sent
        // on the old code either; the guard check above is the one that failed before the fix.
        AcquireResult next = attempt(third, key, "third");
        assertThat(next.isGranted()).isTrue();
        assertThat(second.release(key, "second").toCompletableFuture().get(5, TimeUnit.SECONDS))
                .as("a release of a force-released hold")
                .isFalse();
        assertThat(inspector.checkExists().forPath(path))
                .as("the next holder's node is still there")
                .isNotNull();
    }

    /**
     * A write hold force-released by an operator, then downgraded by its holder before the holder's client
     * has handled the deletion (the tap holds back the {@code exists} that checks its node), after another
     * client took and released the write lock. The downgrade's read entry then has no write entry ahead,
     * and was granted with a token in the deleted write's room, below the other writer's: tokens must
     * increase in grant order. It is refused as etcd refuses it (token-room.pml,
     * BUG_ZK_DOWNGRADE_WITHOUT_WRITE).
     */
    @Test
    void aDowngradeWhoseWriteHoldWasForceReleasedIsRefusedEvenWithNoWriterAhead() throws Exception {
        CuratorFramework inspector = curator(servers.connectString());
        LockBackend other = backend(curator(servers.connectString()));
        LockBackend operator = backend(curator(servers.connectString()));
        HoldBackRequest tap = new HoldBackRequest(ZooDefs.OpCode.exists);
        String[] hostPort = servers.connectString().split(":");
        TcpProxy proxy = TcpProxy.start(hostPort[0], Integer.parseInt(hostPort[1]), () -> tap);
        closeables.add(proxy);
        CuratorFramework holderCurator = curator("127.0.0.1:" + proxy.port());
        holderCurator.blockUntilConnected(10, TimeUnit.SECONDS);
        LockBackend holder = backend(holderCurator);
        LockKey write = new LockKey(namespace, "downgraded", Mode.WRITE);
        LockKey read = new LockKey(namespace, "downgraded", Mode.READ);

        AcquireResult first = attempt(holder, write, "w0");
        assertThat(first.isGranted()).isTrue();
        tap.armed = true;
        assertThat(operator.forceRelease(write).toCompletableFuture().get(5, TimeUnit.SECONDS))
                .isTrue();
        assertThat(tap.held.await(10, TimeUnit.SECONDS))
                .as("the holder's client checks its node: held back, so the client still counts it held")
                .isTrue();
        AcquireResult second = attempt(other, write, "w1");
        assertThat(second.isGranted()).isTrue();
        assertThat(other.release(write, "w1").toCompletableFuture().get(5, TimeUnit.SECONDS))
                .isTrue();
        CompletableFuture<AcquireResult> downgrade = holder.acquire(new AcquireRequest(read, "r0", 30_000, 1, 0, "w0"))
                .toCompletableFuture();
        tap.letGo.countDown();

        AcquireResult granted = null;
        Throwable refused = null;
        try {
            granted = downgrade.get(10, TimeUnit.SECONDS);
        } catch (ExecutionException e) {
            refused = e.getCause();
        }
        assertThat(granted)
                .as(
                        "the read was granted with token %s after the other writer's %d",
                        granted == null ? null : granted.token(), second.token())
                .isNull();
        assertThat(refused).isInstanceOf(LockBackendException.class).hasMessageContaining("to downgrade from is gone");
        assertThat(children(inspector, NodeLayout.resourcePath(read)))
                .as("the read entry was deleted")
                .isEmpty();
    }

    private static List<String> children(CuratorFramework client, String path) throws Exception {
        try {
            return client.getChildren().forPath(path);
        } catch (KeeperException.NoNodeException e) {
            return List.of(); // an empty container reaped
        }
    }
}
