package dev.dlock.zookeeper;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;

import dev.dlock.Lease;
import dev.dlock.LockClient;
import dev.dlock.LockKind;
import dev.dlock.LockTimeoutException;
import dev.dlock.spi.AcquireRequest;
import dev.dlock.spi.AcquireResult;
import dev.dlock.spi.BackendContext;
import dev.dlock.spi.LockBackend;
import dev.dlock.spi.LockKey;
import dev.dlock.spi.Mode;
import java.time.Duration;
import java.util.ArrayList;
import java.util.List;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.CopyOnWriteArrayList;
import java.util.concurrent.ThreadLocalRandom;
import java.util.concurrent.TimeUnit;
import org.apache.curator.framework.CuratorFramework;
import org.apache.curator.framework.CuratorFrameworkFactory;
import org.apache.curator.retry.RetryNTimes;
import org.apache.curator.utils.ZKPaths;
import org.apache.zookeeper.CreateMode;
import org.apache.zookeeper.data.Stat;
import org.junit.jupiter.api.AfterAll;
import org.junit.jupiter.api.AfterEach;
import org.junit.jupiter.api.BeforeAll;
import org.junit.jupiter.api.BeforeEach;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.Timeout;

/**
 * What the contract suite cannot see: how the ZooKeeper recipes use nodes, watches and sessions.
 * Against a standalone server in this JVM.
 */
@Timeout(value = 60, unit = TimeUnit.SECONDS)
class ZooKeeperBackendTest {
    private static final Duration WAIT = Duration.ofSeconds(10);
    private static ZooKeeperServers servers;

    private final List<AutoCloseable> closeables = new ArrayList<>();
    private final List<String> lostReasons = new CopyOnWriteArrayList<>();
    private String namespace;

    @BeforeAll
    static void startServer() throws Exception {
        servers = ZooKeeperServers.standalone();
    }

    @AfterAll
    static void stopServer() throws Exception {
        servers.close();
    }

    @BeforeEach
    void newNamespace() {
        namespace = "t" + Long.toHexString(ThreadLocalRandom.current().nextLong() & 0xffffffffL);
    }

    @AfterEach
    void closeAll() throws Exception {
        for (int i = closeables.size() - 1; i >= 0; i--) {
            closeables.get(i).close();
        }
    }

    private CuratorFramework curator(CountingZooKeeper.Counter counter) {
        CuratorFrameworkFactory.Builder b = CuratorFrameworkFactory.builder()
                .connectString(servers.connectString())
                .sessionTimeoutMs(10_000)
                .retryPolicy(new RetryNTimes(3, 100));
        if (counter != null) {
            b.zookeeperFactory(CountingZooKeeper.factory(counter));
        }
        CuratorFramework c = b.build();
        c.start();
        closeables.add(c);
        return c;
    }

    private LockClient client(CuratorFramework curator) {
        LockClient c = LockClient.builder(TestClients.recording(ZooKeeperBackends.of(curator)))
                .namespace(namespace)
                .build();
        closeables.add(c);
        return c;
    }

    private LockClient client() {
        return client(curator(null));
    }

    private LockBackend backend(CuratorFramework curator) {
        LockBackend b =
                ZooKeeperBackends.of(curator).open(new BackendContext(null, Duration.ofSeconds(5), lostReasons::add));
        closeables.add(b);
        return b;
    }

    private AcquireResult attempt(LockBackend b, Mode mode, String name, String owner) throws Exception {
        return b.acquire(new AcquireRequest(new LockKey(namespace, name, mode), owner, 30_000, 1, 0, null))
                .toCompletableFuture()
                .get(5, TimeUnit.SECONDS);
    }

    // ---- creates whose answer was lost, and nodes of other sessions

    @Test
    void anExclusiveNodeWhoseCreateAnswerWasLostIsFoundAgainByItsOwner() throws Exception {
        CuratorFramework curator = curator(null);
        LockBackend b = backend(curator);
        String path = NodeLayout.resourcePath(new LockKey(namespace, "lost-answer", Mode.EXCLUSIVE));
        // What a create that reached the server, but whose answer was lost, leaves behind:
        String guard = NodeLayout.guardPath(path, "owner-1");
        curator.createContainers(ZKPaths.getPathAndNode(path).getPath());
        curator.transaction()
                .forOperations(
                        curator.transactionOp()
                                .create()
                                .withMode(CreateMode.EPHEMERAL)
                                .forPath(path, NodeLayout.data("owner-1", 1, "lost-answer")),
                        curator.transactionOp()
                                .create()
                                .withMode(CreateMode.EPHEMERAL)
                                .forPath(guard));
        Stat stat = curator.checkExists().forPath(path);

        AcquireResult result = attempt(b, Mode.EXCLUSIVE, "lost-answer", "owner-1");
        assertThat(result.isGranted()).isTrue();
        assertThat(result.token()).as("the node's czxid, scaled by 16").isEqualTo(stat.getCzxid() * 16);
        assertThat(b.release(new LockKey(namespace, "lost-answer", Mode.EXCLUSIVE), "owner-1")
                        .toCompletableFuture()
                        .get())
                .isTrue();
        assertThat(curator.checkExists().forPath(path)).isNull();
        assertThat(curator.checkExists().forPath(guard)).isNull();
    }

    @Test
    void aNodeOfAnotherSessionIsNeverTakenForOurs() throws Exception {
        CuratorFramework other = curator(null);
        String path = NodeLayout.resourcePath(new LockKey(namespace, "other-session", Mode.EXCLUSIVE));
        other.create()
                .creatingParentContainersIfNeeded()
                .withMode(CreateMode.EPHEMERAL)
                .forPath(path, NodeLayout.data("owner-1", 1, "other-session"));

        LockBackend b = backend(curator(null));
        assertThat(attempt(b, Mode.EXCLUSIVE, "other-session", "owner-1").isGranted())
                .isFalse();
        assertThat(other.checkExists().forPath(path)).isNotNull();
    }

    @Test
    void duplicateEntriesOfARetriedSequentialCreateAreRemoved() throws Exception {
        CuratorFramework curator = curator(null);
        LockBackend b = backend(curator);
        LockKey key = new LockKey(namespace, "dups", Mode.FAIR);
        String prefix = NodeLayout.entryPathPrefix(key, "owner-2");
        byte[] data = NodeLayout.data("owner-2", 1, "dups");
        for (int i = 0; i < 2; i++) {
            curator.create()
                    .creatingParentContainersIfNeeded()
                    .withMode(CreateMode.EPHEMERAL_SEQUENTIAL)
                    .forPath(prefix, data);
        }
        assertThat(attempt(b, Mode.FAIR, "dups", "owner-2").isGranted()).isTrue();
        awaitChildren(curator, NodeLayout.resourcePath(key), 1);
        b.release(key, "owner-2").toCompletableFuture().get();
        awaitChildren(curator, NodeLayout.resourcePath(key), 0);
    }

    private static void awaitChildren(CuratorFramework curator, String dir, int count) throws Exception {
        long deadline = System.nanoTime() + TimeUnit.SECONDS.toNanos(5);
        while (true) {
            int n = curator.checkExists().forPath(dir) == null
                    ? 0
                    : curator.getChildren().forPath(dir).size();
            if (n == count) {
                return;
            }
            assertThat(System.nanoTime() - deadline)
                    .as("%s has %d children", dir, count)
                    .isNegative();
            Thread.sleep(20);
        }
    }

    // ---- a release after a force-release

    @Test
    void aReleaseAfterAForceReleaseNeverDeletesTheNextHoldersNode() throws Exception {
        CuratorFramework curator = curator(null);
        LockBackend old = backend(curator);
        LockBackend next = backend(curator(null));
        LockKey key = new LockKey(namespace, "guarded", Mode.EXCLUSIVE);
        String path = NodeLayout.resourcePath(key);
        for (int round = 0; round < 5; round++) {
            assertThat(attempt(old, Mode.EXCLUSIVE, "guarded", "old-" + round).isGranted())
                    .isTrue();
            assertThat(next.forceRelease(key).toCompletableFuture().get()).isTrue();
            AcquireResult taken = attempt(next, Mode.EXCLUSIVE, "guarded", "next-" + round);
            assertThat(taken.isGranted()).isTrue();
            // Sent at once: the old holder's watch may not have told it about the force-release yet.
            assertThat(old.release(key, "old-" + round).toCompletableFuture().get())
                    .isFalse();
            Stat stat = curator.checkExists().forPath(path);
            assertThat(stat).as("the next holder's node is still there").isNotNull();
            assertThat(taken.token()).as("the node's czxid, scaled by 16").isEqualTo(stat.getCzxid() * 16);
            assertThat(next.release(key, "next-" + round).toCompletableFuture().get())
                    .isTrue();
        }
    }

    // ---- waiters that give up leave nothing behind

    @Test
    void aSemaphoreWaiterThatGivesUpDoesNotKeepAPermit() throws Exception {
        Lease held = client().semaphore("sem-timeout", 1).acquire(WAIT);
        LockClient waiter = client();
        assertThatThrownBy(() -> waiter.semaphore("sem-timeout", 1).acquire(Duration.ofMillis(300)))
                .isInstanceOf(LockTimeoutException.class);
        held.close();
        Lease next = client().semaphore("sem-timeout", 1).tryAcquire().orElseThrow();
        assertThat(next.fencingToken()).isGreaterThan(held.fencingToken());
        next.close();
    }

    @Test
    void aReaderThatGivesUpDoesNotBlockWriters() throws Exception {
        Lease writer = client().readWriteLock("rw-timeout").writeLock().acquire(WAIT);
        assertThatThrownBy(() -> client().readWriteLock("rw-timeout").readLock().acquire(Duration.ofMillis(300)))
                .isInstanceOf(LockTimeoutException.class);
        writer.close();
        client().readWriteLock("rw-timeout")
                .writeLock()
                .tryAcquire()
                .orElseThrow()
                .close();
    }

    @Test
    void busyAttemptsLeaveNoStateBehind() throws Exception {
        LockClient holder = client();
        Lease exclusive = holder.lock("busy").acquire(WAIT);
        Lease fair = holder.fairLock("busy").acquire(WAIT);
        Lease write = holder.readWriteLock("busy").writeLock().acquire(WAIT);
        Lease permit = holder.semaphore("busy", 1).acquire(WAIT);
        LockClient other = client();
        for (int i = 0; i < 5; i++) {
            assertThat(other.lock("busy").tryAcquire()).isEmpty();
            assertThat(other.fairLock("busy").tryAcquire()).isEmpty();
            assertThat(other.readWriteLock("busy").readLock().tryAcquire()).isEmpty();
            assertThat(other.semaphore("busy", 1).tryAcquire()).isEmpty();
        }
        assertThatThrownBy(() -> other.fairLock("busy").acquire(Duration.ofMillis(200)))
                .isInstanceOf(LockTimeoutException.class);
        Thread.sleep(200);
        assertThat(TestClients.backend(other).acquisitions())
                .as("no acquisition state kept for busy or abandoned attempts")
                .isZero();
        assertThat(client().describe("busy")).as("no queue entries left behind").allMatch(info -> info.waiters() == 0);
        for (Lease l : List.of(exclusive, fair, write, permit)) {
            l.close();
        }
    }

    @Test
    void closingAClientOnASharedCuratorRemovesItsNodesAndLeavesCuratorOpen() throws Exception {
        CuratorFramework shared = curator(null);
        LockClient a = LockClient.builder(ZooKeeperBackends.of(shared))
                .namespace(namespace)
                .build();
        Lease blocker = client().semaphore("shared-close", 1).acquire(WAIT);
        a.lock("shared-close").acquire(WAIT);
        CompletableFuture<Lease> waiting = a.semaphore("shared-close", 1).acquireAsync(Duration.ofSeconds(30));
        Thread.sleep(300);
        a.close();
        assertThat(waiting).failsWithin(Duration.ofSeconds(5));
        assertThat(shared.getState()).isEqualTo(org.apache.curator.framework.imps.CuratorFrameworkState.STARTED);
        awaitChildren(shared, NodeLayout.resourcePath(new LockKey(namespace, "shared-close", Mode.PERMIT)), 1);
        assertThat(client().lock("shared-close").tryAcquire()).isPresent();
        blocker.close();
    }

    // ---- no herd

    @Test
    void aFairReleaseMakesOnlyTheNextWaitersClientAsk() throws Exception {
        assertOnlyTheFirstWaiterAsks(c -> c.fairLock("fair-herd"));
    }

    @Test
    void aSemaphoreReleaseMakesOnlyTheAdmittedWaitersClientAsk() throws Exception {
        assertOnlyTheFirstWaiterAsks(c -> c.semaphore("sem-herd", 1));
    }

    @Test
    void aWriterReleaseMakesOnlyTheWaitingWritersClientAsk() throws Exception {
        assertOnlyTheFirstWaiterAsks(c -> c.readWriteLock("rw-herd").writeLock());
    }

    /** Something that hands out leases: a lock view or a semaphore. */
    @FunctionalInterface
    interface Leases {
        CompletableFuture<Lease> acquireAsync(Duration wait);
    }

    private void assertOnlyTheFirstWaiterAsks(java.util.function.Function<LockClient, Object> view) throws Exception {
        Lease held = leases(view.apply(client())).acquireAsync(WAIT).get(10, TimeUnit.SECONDS);
        List<CountingZooKeeper.Counter> counters = new ArrayList<>();
        List<CompletableFuture<Lease>> waiting = new ArrayList<>();
        for (int i = 0; i < 3; i++) {
            CountingZooKeeper.Counter counter = new CountingZooKeeper.Counter();
            counters.add(counter);
            waiting.add(leases(view.apply(client(curator(counter)))).acquireAsync(Duration.ofSeconds(30)));
            Thread.sleep(300); // queue in arrival order
        }
        Thread.sleep(300);
        counters.forEach(CountingZooKeeper.Counter::reset);
        held.close();
        Lease first = waiting.get(0).get(10, TimeUnit.SECONDS);
        Thread.sleep(500);
        assertThat(counters.get(0).requests()).as("the first waiter asked").isPositive();
        assertThat(counters.get(1).requests())
                .as("the second waiter's client stayed silent")
                .isZero();
        assertThat(counters.get(2).requests())
                .as("the third waiter's client stayed silent")
                .isZero();
        assertThat(waiting.get(1)).isNotDone();
        first.close();
        waiting.get(1).get(10, TimeUnit.SECONDS).close();
        waiting.get(2).get(10, TimeUnit.SECONDS).close();
    }

    private static Leases leases(Object view) {
        if (view instanceof dev.dlock.DistributedLock lock) {
            return lock::acquireAsync;
        }
        return ((dev.dlock.DistributedSemaphore) view)::acquireAsync;
    }

    // ---- containers and tokens

    @Test
    void emptyQueueDirectoriesAreReapedContainersAndTokensKeepIncreasing() throws Exception {
        CuratorFramework curator = curator(null);
        LockClient c = client(curator);
        String dir = NodeLayout.resourcePath(new LockKey(namespace, "reaped", Mode.FAIR));
        Lease first = c.fairLock("reaped").acquire(WAIT);
        assertThat(curator.checkExists().forPath(dir)).isNotNull();
        first.close();
        long deadline = System.nanoTime() + TimeUnit.SECONDS.toNanos(10);
        while (curator.checkExists().forPath(dir) != null) {
            assertThat(System.nanoTime() - deadline)
                    .as("the empty directory was reaped, so it is a CONTAINER node")
                    .isNegative();
            Thread.sleep(50);
        }
        Lease second = c.fairLock("reaped").acquire(WAIT);
        assertThat(second.fencingToken()).isGreaterThan(first.fencingToken());
        second.close();
    }

    @Test
    void describeShowsQueueHoldersWaitersAndTokens() throws Exception {
        LockClient a = client();
        Lease r1 = a.readWriteLock("described-rw").readLock().acquire(WAIT);
        Lease r2 = client().readWriteLock("described-rw").readLock().acquire(WAIT);
        CompletableFuture<Lease> writer =
                client().readWriteLock("described-rw").writeLock().acquireAsync(Duration.ofSeconds(30));
        Thread.sleep(500);
        var info = client().describe("described-rw");
        assertThat(info).hasSize(1);
        assertThat(info.get(0).kind()).isEqualTo(LockKind.READ_WRITE);
        assertThat(info.get(0).holders())
                .extracting(h -> h.fencingToken())
                .containsExactly(r1.fencingToken(), r2.fencingToken());
        assertThat(info.get(0).holders()).extracting(h -> h.mode()).containsOnly("read");
        assertThat(info.get(0).waiters()).isEqualTo(1);
        r1.close();
        r2.close();
        writer.get(10, TimeUnit.SECONDS).close();
    }

    @Test
    void aLongNameIsHashedIntoItsSegmentAndStillListedByItsFullName() throws Exception {
        String name = "long/".repeat(200);
        LockClient a = client();
        try (Lease lease = a.semaphore(name, 2).acquire(WAIT)) {
            String segment = NodeLayout.segment(name);
            assertThat(segment.length()).isLessThanOrEqualTo(NodeLayout.MAX_SEGMENT);
            assertThat(client().list("long/long/")).extracting(i -> i.name()).containsExactly(name);
            assertThat(lease.isValid()).isTrue();
        }
    }
}
