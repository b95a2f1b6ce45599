package dev.dlock.zookeeper;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;

import dev.dlock.LockBackendException;
import dev.dlock.spi.AcquireRequest;
import dev.dlock.spi.AcquireResult;
import dev.dlock.spi.BackendContext;
import dev.dlock.spi.LockBackend.Subscription;
import dev.dlock.spi.LockKey;
import dev.dlock.spi.Mode;
import dev.dlock.testsupport.TcpProxy;
import java.time.Duration;
import java.util.List;
import java.util.Set;
import java.util.concurrent.BlockingQueue;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.CountDownLatch;
import java.util.concurrent.ExecutionException;
import java.util.concurrent.LinkedBlockingQueue;
import java.util.concurrent.TimeUnit;
import org.apache.curator.framework.CuratorFramework;
import org.apache.curator.framework.CuratorFrameworkFactory;
import org.apache.curator.retry.RetryUntilElapsed;
import org.junit.jupiter.api.AfterAll;
import org.junit.jupiter.api.BeforeAll;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.Timeout;

/**
 * A store call that gives up leaves nothing behind when its answer comes late: a semaphore subscription
 * whose watch the server does not confirm within the operation timeout fails, drops its listener, and a
 * watch Curator sets after reconnecting is removed again. And the opposite: an answer that comes before
 * the request has even returned is kept, and handled in the event thread's order.
 */
@Timeout(value = 90, unit = TimeUnit.SECONDS)
class LateAnswerTest {
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
    void aSubscriptionThatTimesOutIsCancelledAndItsLateWatchRemoved() throws Exception {
        CountingZooKeeper.Counter counter = new CountingZooKeeper.Counter();
        CuratorFramework curator = CuratorFrameworkFactory.builder()
                .connectString("127.0.0.1:" + proxy.port())
                .zookeeperFactory(CountingZooKeeper.factory(counter))
                .sessionTimeoutMs(10_000)
                .retryPolicy(new RetryUntilElapsed(30_000, 200))
                .build();
        curator.start();
        try (ZooKeeperBackend backend = ZooKeeperBackend.open(
                curator, false, 0, new BackendContext(null, Duration.ofSeconds(1), reason -> {}))) {
            LockKey key = new LockKey("late", "s", Mode.PERMIT);
            proxy.freeze();
            CompletableFuture<Subscription> late;
            try {
                long start = System.nanoTime();
                late = backend.subscribe(key, owner -> {}).toCompletableFuture();
                assertThatThrownBy(() -> late.get(5, TimeUnit.SECONDS))
                        .isInstanceOf(ExecutionException.class)
                        .hasCauseInstanceOf(LockBackendException.class);
                assertThat(TimeUnit.NANOSECONDS.toMillis(System.nanoTime() - start))
                        .as("failed within the operation timeout and a margin")
                        .isLessThan(3_000);
                assertThat(interests(backend)).as("the listener was dropped").isEmpty();
            } finally {
                proxy.restore();
            }
            // Curator sends the watch again once reconnected; when the server has set it, it is removed.
            long deadline = System.nanoTime() + TimeUnit.SECONDS.toNanos(30);
            while (counter.watchesSet.get() == 0) {
                assertThat(System.nanoTime() - deadline)
                        .as("Curator sent the watch again")
                        .isNegative();
                Thread.sleep(50);
            }
            awaitNoWatch(curator, Duration.ofSeconds(10));

            Subscription live =
                    backend.subscribe(key, owner -> {}).toCompletableFuture().get(10, TimeUnit.SECONDS);
            assertThat(watches(curator))
                    .as("the live watch is set; watch requests: %s", counter.watchLog)
                    .hasSize(1);
            live.cancel();
            awaitNoWatch(curator, Duration.ofSeconds(10));
            assertThat(interests(backend)).isEmpty();
        } finally {
            curator.close();
        }
    }

    /**
     * A watch the server confirms before the request that sent it has returned (the answer is handled on
     * ZooKeeper's event thread meanwhile) belongs to the subscription that asked for it. It was once taken
     * for a leftover and removed at once (1 in about 160 runs of the case above under load): the
     * subscription's future was recorded only after the request returned.
     */
    @Test
    void aWatchAnsweredBeforeItsRequestReturnsIsKept() throws Exception {
        CountingZooKeeper.Counter counter = new CountingZooKeeper.Counter();
        CuratorFramework curator = CuratorFrameworkFactory.builder()
                .connectString(servers.connectString())
                .zookeeperFactory(CountingZooKeeper.factory(counter))
                .sessionTimeoutMs(10_000)
                .retryPolicy(new RetryUntilElapsed(10_000, 200))
                .build();
        curator.start();
        try (ZooKeeperBackend backend = ZooKeeperBackend.open(
                curator, false, 0, new BackendContext(null, Duration.ofSeconds(5), reason -> {}))) {
            counter.answerWatchesBeforeReturning = true;
            Subscription subscription = backend.subscribe(new LockKey("early", "s", Mode.PERMIT), owner -> {})
                    .toCompletableFuture()
                    .get(10, TimeUnit.SECONDS);
            assertThat(counter.watchLog)
                    .as("the watch was answered before its request returned, and never removed")
                    .anyMatch(entry -> entry.contains("add") && entry.contains("answered OK"))
                    .noneMatch(entry -> entry.contains("remove"));
            assertThat(watches(curator)).hasSize(1);
            subscription.cancel();
            awaitNoWatch(curator, Duration.ofSeconds(10));
        } finally {
            curator.close();
        }
    }

    /**
     * A semaphore waiter's read answered before the request that sent it has returned, with a release
     * handled by the event thread in between: the waiter's decision still comes before that release in
     * the event thread's order, so the release counts down the entries it has ahead and the next release
     * wakes it. When the decision was attached after the request returned, it ran on the calling thread
     * after the release and put the released entry back into the set: the next release then left one
     * entry ahead of two permits counted as two, and the waiter waited with a permit free (the lost
     * wake-up semaphore-countdown.pml finds as BUG_DECIDE_OFF_EVENT_THREAD).
     */
    @Test
    void aSemaphoreWaiterWhoseReadIsAnsweredBeforeItsRequestReturnsIsWokenByTheNextRelease() throws Exception {
        CountingZooKeeper.Counter counter = new CountingZooKeeper.Counter();
        CuratorFramework curator = CuratorFrameworkFactory.builder()
                .connectString(servers.connectString())
                .zookeeperFactory(CountingZooKeeper.factory(counter))
                .sessionTimeoutMs(10_000)
                .retryPolicy(new RetryUntilElapsed(10_000, 200))
                .build();
        CuratorFramework othersCurator = CuratorFrameworkFactory.builder()
                .connectString(servers.connectString())
                .sessionTimeoutMs(10_000)
                .retryPolicy(new RetryUntilElapsed(10_000, 200))
                .build();
        curator.start();
        othersCurator.start();
        BackendContext context = new BackendContext(null, Duration.ofSeconds(5), reason -> {});
        try (ZooKeeperBackend waiter = ZooKeeperBackend.open(curator, false, 0, context);
                ZooKeeperBackend others = ZooKeeperBackend.open(othersCurator, false, 0, context)) {
            LockKey key = new LockKey("early", "counted", Mode.PERMIT);
            assertThat(permit(others, key, "a").isGranted()).isTrue();
            assertThat(permit(others, key, "b").isGranted()).isTrue();
            assertThat(permit(others, key, "c").isGranted()).as("two permits").isFalse();
            BlockingQueue<String> wakes = new LinkedBlockingQueue<>();
            Subscription subscription = waiter.subscribe(key, owner -> {
                        if (owner != null) {
                            wakes.add(owner);
                        }
                    })
                    .toCompletableFuture()
                    .get(10, TimeUnit.SECONDS);
            assertThat(permit(waiter, key, "w").isGranted())
                    .as("a, b and c ahead")
                    .isFalse();

            // Asked again: the read's answer (a, b, c, w) is handled before the request returns, then a's
            // release, and only then may the caller attach what it does with the answer.
            counter.afterChildrenAnswered.set(() -> {
                try {
                    assertThat(others.release(key, "a").toCompletableFuture().get(5, TimeUnit.SECONDS))
                            .isTrue();
                    eventThreadPassed(curator);
                } catch (Exception e) {
                    throw new IllegalStateException(e);
                }
            });
            assertThat(permit(waiter, key, "w").isGranted()).as("b and c ahead").isFalse();
            assertThat(counter.afterChildrenAnswered.get())
                    .as("the read was answered early")
                    .isNull();
            assertThat(wakes).as("not woken: two entries ahead of two permits").isEmpty();

            assertThat(others.release(key, "b").toCompletableFuture().get(5, TimeUnit.SECONDS))
                    .isTrue();
            assertThat(wakes.poll(10, TimeUnit.SECONDS))
                    .as("woken when b left: only c is ahead, a permit is free")
                    .isEqualTo("w");
            subscription.cancel();
        } finally {
            curator.close();
            othersCurator.close();
        }
    }

    private static AcquireResult permit(ZooKeeperBackend backend, LockKey key, String owner) throws Exception {
        return backend.acquire(new AcquireRequest(key, owner, 30_000, 2, 30_000, null))
                .toCompletableFuture()
                .get(10, TimeUnit.SECONDS);
    }

    /**
     * Returns once the client's event thread has handled every event the server sent before answering a
     * request sent now (a watch's events come before the answers to later requests).
     */
    private static void eventThreadPassed(CuratorFramework curator) throws Exception {
        CountDownLatch answered = new CountDownLatch(1);
        curator.getZookeeperClient()
                .getZooKeeper()
                .exists("/", false, (rc, path, ctx, stat) -> answered.countDown(), null);
        assertThat(answered.await(10, TimeUnit.SECONDS))
                .as("the exists was answered")
                .isTrue();
    }

    private static Set<String> interests(ZooKeeperBackend backend) {
        return backend.subscribedResources();
    }

    private static List<String> watches(CuratorFramework curator) throws Exception {
        return ((CountingZooKeeper) curator.getZookeeperClient().getZooKeeper()).persistentRecursiveWatchPaths();
    }

    private static void awaitNoWatch(CuratorFramework curator, Duration within) throws Exception {
        long deadline = System.nanoTime() + within.toNanos();
        while (!watches(curator).isEmpty()) {
            assertThat(System.nanoTime() - deadline)
                    .as("the persistent watch is removed: " + watches(curator))
                    .isNegative();
            Thread.sleep(50);
        }
    }
}
