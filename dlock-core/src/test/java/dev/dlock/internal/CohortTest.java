package dev.dlock.internal;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;

import dev.dlock.DistributedLock;
import dev.dlock.Lease;
import dev.dlock.LockClient;
import dev.dlock.LockListener;
import dev.dlock.LockTimeoutException;
import dev.dlock.internal.lease.LeaseImpl;
import dev.dlock.spi.LockBackendProvider;
import java.time.Duration;
import java.util.ArrayList;
import java.util.List;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.ConcurrentLinkedQueue;
import java.util.concurrent.CopyOnWriteArrayList;
import java.util.concurrent.CountDownLatch;
import java.util.concurrent.ThreadLocalRandom;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.atomic.AtomicBoolean;
import java.util.concurrent.atomic.AtomicInteger;
import java.util.concurrent.atomic.AtomicLong;
import java.util.concurrent.atomic.AtomicReference;
import java.util.function.Consumer;
import org.junit.jupiter.api.AfterEach;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.Timeout;

/** Cohort hand-off ({@link Cohort}) over the memory store, which reserves 1024 tokens per grant. */
@Timeout(60)
class CohortTest {
    private static final long BLOCK = 1024;
    private final List<LockClient> clients = new ArrayList<>();
    private final List<Engine> engines = new ArrayList<>();
    private final String namespace =
            "cohort" + Long.toHexString(ThreadLocalRandom.current().nextLong() & 0xffffff);

    @AfterEach
    void close() {
        clients.forEach(LockClient::close);
        engines.forEach(Engine::close);
    }

    private LockClient client(AtomicReference<CountingBackend> counter, Consumer<LockClient.Builder> options) {
        LockClient.Builder b = LockClient.builder(
                        LockBackendProvider.factoryFor("mem:cohort-test").andThen(backend -> {
                            CountingBackend counting = new CountingBackend(backend);
                            counter.set(counting);
                            return counting;
                        }))
                .namespace(namespace);
        options.accept(b);
        LockClient c = b.build();
        clients.add(c);
        return c;
    }

    /** Threads of one client loop over one lock; returns the tokens in grant order. */
    private static List<Long> hammer(DistributedLock lock, int threads, int cycles) throws Exception {
        return hammer(lock, threads, cycles, true);
    }

    private static List<Long> hammer(DistributedLock lock, int threads, int cycles, boolean exclusive)
            throws Exception {
        ConcurrentLinkedQueue<Long> tokens = new ConcurrentLinkedQueue<>();
        AtomicBoolean inside = new AtomicBoolean();
        List<Thread> list = new ArrayList<>();
        List<Throwable> errors = new CopyOnWriteArrayList<>();
        for (int t = 0; t < threads; t++) {
            Thread thread = new Thread(() -> {
                try {
                    for (int i = 0; i < cycles; i++) {
                        lock.lock();
                        try {
                            assertThat(inside.getAndSet(exclusive))
                                    .as("two holders at once")
                                    .isFalse();
                            Lease lease = lock.currentLease().orElseThrow();
                            assertThat(lease.isValid()).isTrue();
                            tokens.add(lease.fencingToken());
                            inside.set(false);
                        } finally {
                            lock.unlock();
                        }
                    }
                } catch (Throwable e) {
                    errors.add(e);
                }
            });
            list.add(thread);
            thread.start();
        }
        for (Thread thread : list) {
            thread.join();
        }
        assertThat(errors).isEmpty();
        return new ArrayList<>(tokens);
    }

    @Test
    void releasesPassToLocalWaitersWithIncreasingTokensAndFewerStoreGrants() throws Exception {
        AtomicReference<CountingBackend> counter = new AtomicReference<>();
        AtomicInteger acquiredEvents = new AtomicInteger();
        LockClient c = client(
                counter,
                b -> b.listener(new LockListener() {
                    @Override
                    public void acquired(String name, Duration waited) {
                        acquiredEvents.incrementAndGet();
                    }
                }));
        List<Long> tokens = hammer(c.lock("hot"), 4, 500);
        assertThat(tokens).hasSize(2000).isSorted().doesNotHaveDuplicates();
        long storeGrants = tokens.stream().filter(t -> t % BLOCK == 0).count();
        long passes = tokens.size() - storeGrants;
        assertThat(passes).as("holds passed between threads without the store").isPositive();
        assertThat(tokens.stream().mapToLong(t -> t % BLOCK).max().orElseThrow())
                .as("at most 32 passes per store grant (the default)")
                .isLessThanOrEqualTo(32);
        assertThat(counter.get().acquires.get())
                .as("store acquires (granted or not) < grants")
                .isLessThan(tokens.size());
        // Every grant, passed or not, is an 'acquired' event for the listener.
        long until = System.nanoTime() + TimeUnit.SECONDS.toNanos(5);
        while (acquiredEvents.get() < 2000 && System.nanoTime() < until) {
            Thread.sleep(10);
        }
        assertThat(acquiredEvents.get()).isEqualTo(2000);
    }

    @Test
    void zeroTurnsHandOffOff() throws Exception {
        AtomicReference<CountingBackend> counter = new AtomicReference<>();
        LockClient c = client(counter, b -> b.localHandoff(0, Duration.ofSeconds(1)));
        List<Long> tokens = hammer(c.lock("hot"), 4, 100);
        assertThat(tokens).hasSize(400).isSorted().allMatch(t -> t % BLOCK == 0);
    }

    @Test
    void theBoundSendsTheHoldBackToTheStoreSoAnotherClientGetsIt() throws Exception {
        AtomicReference<CountingBackend> counter = new AtomicReference<>();
        LockClient busy = client(counter, b -> b.localHandoff(3, Duration.ofMinutes(1)));
        LockClient other = client(new AtomicReference<>(), b -> {});
        DistributedLock lock = busy.lock("shared");
        AtomicBoolean stop = new AtomicBoolean();
        AtomicLong maxPass = new AtomicLong();
        List<Thread> threads = new ArrayList<>();
        for (int t = 0; t < 4; t++) {
            Thread thread = new Thread(() -> {
                while (!stop.get()) {
                    lock.lock();
                    try {
                        long token = lock.currentLease().orElseThrow().fencingToken();
                        maxPass.accumulateAndGet(token % BLOCK, Math::max);
                    } finally {
                        lock.unlock();
                    }
                }
            });
            threads.add(thread);
            thread.start();
        }
        try {
            Thread.sleep(100);
            for (int i = 0; i < 20; i++) {
                try (Lease lease = other.lock("shared").acquire(Duration.ofSeconds(5))) {
                    assertThat(lease.isValid()).isTrue();
                }
            }
        } finally {
            stop.set(true);
            for (Thread thread : threads) {
                thread.join();
            }
        }
        assertThat(maxPass.get()).as("passes happened, at most 3 in a row").isBetween(1L, 3L);
    }

    @Test
    void aWaiterWhoseDeadlinePassedIsSkippedAndTheNextOneGetsTheHold() throws Exception {
        // An engine, not a LockClient: the test occupies its scheduler thread.
        Engine c = Engine.open(
                "mem:cohort-test",
                LockBackendProvider.factoryFor("mem:cohort-test"),
                new EngineOptions(
                        EngineOptions.DEFAULTS.leaseMillis(),
                        EngineOptions.DEFAULTS.renewal(),
                        EngineOptions.DEFAULTS.waitTime(),
                        EngineOptions.DEFAULTS.localQueueLimit(),
                        namespace,
                        EngineOptions.DEFAULTS.operationTimeout(),
                        EngineOptions.DEFAULTS.listener(),
                        32,
                        Duration.ofMinutes(1)));
        engines.add(c);
        DistributedLock lock = c.lock("deadline");
        Lease held = lock.acquire(Duration.ofSeconds(1));
        // Keep the scheduler busy so that the first waiter's deadline passes without its timer running.
        CountDownLatch unblock = new CountDownLatch(1);
        CountDownLatch blocked = new CountDownLatch(1);
        c.store.schedule(
                () -> {
                    blocked.countDown();
                    try {
                        unblock.await();
                    } catch (InterruptedException e) {
                        Thread.currentThread().interrupt();
                    }
                },
                0);
        CompletableFuture<Lease> late;
        CompletableFuture<Lease> next;
        try {
            assertThat(blocked.await(5, TimeUnit.SECONDS)).isTrue();
            late = lock.acquireAsync(Duration.ofMillis(300));
            next = lock.acquireAsync(Duration.ofSeconds(10));
            Thread.sleep(700);
            assertThat(late).as("its deadline timer cannot run").isNotDone();
            held.close();
        } finally {
            unblock.countDown();
        }
        Lease passed = next.get(5, TimeUnit.SECONDS);
        assertThat(passed.isValid()).isTrue();
        assertThat(passed.fencingToken()).isEqualTo(held.fencingToken() + 1);
        assertThatThrownBy(() -> late.get(5, TimeUnit.SECONDS)).hasCauseInstanceOf(LockTimeoutException.class);
        passed.close();
    }

    @Test
    void aLossReportedToAnEarlierHolderReachesTheCurrentOne() throws Exception {
        LockClient c = client(new AtomicReference<>(), b -> b.localHandoff(32, Duration.ofMinutes(1)));
        DistributedLock lock = c.lock("lost");
        LeaseImpl first = (LeaseImpl) lock.acquire(Duration.ofSeconds(1));
        CompletableFuture<Lease> waiter = lock.acquireAsync(Duration.ofSeconds(10));
        Thread.sleep(20);
        first.close();
        Lease second = waiter.get(5, TimeUnit.SECONDS);
        assertThat(second.fencingToken()).isEqualTo(first.fencingToken() + 1);
        // A renewal answer for the first object that arrives now (a watchdog tick that still saw it).
        first.markLost("the store no longer held it at renewal");
        assertThat(second.isValid()).isFalse();
        assertThat(second.whenLost().get(5, TimeUnit.SECONDS)).hasMessageContaining("no longer held");
    }

    @Test
    void aLostLeaseIsNeverPassedOn() throws Exception {
        LockClient c = client(new AtomicReference<>(), b -> b.localHandoff(32, Duration.ofMinutes(1)));
        DistributedLock lock = c.lock("lost-first");
        LeaseImpl first = (LeaseImpl) lock.acquire(Duration.ofSeconds(1));
        CompletableFuture<Lease> waiter = lock.acquireAsync(Duration.ofMillis(300));
        Thread.sleep(20);
        first.markLost("test");
        first.close();
        // The store still holds the first grant (nobody released it there): the waiter gets nothing.
        assertThatThrownBy(() -> waiter.get(5, TimeUnit.SECONDS)).hasCauseInstanceOf(LockTimeoutException.class);
    }

    @Test
    void theWatchdogRenewsAHoldPassedOn() throws Exception {
        AtomicReference<CountingBackend> counter = new AtomicReference<>();
        LockClient c =
                client(counter, b -> b.leaseTime(Duration.ofMillis(1_500)).localHandoff(1000, Duration.ofMinutes(1)));
        DistributedLock lock = c.lock("renewed");
        Lease lease = lock.acquire(Duration.ofSeconds(1));
        for (int pass = 0; pass < 5; pass++) {
            CompletableFuture<Lease> next = lock.acquireAsync(Duration.ofSeconds(5));
            Thread.sleep(50);
            lease.close();
            lease = next.get(5, TimeUnit.SECONDS);
            assertThat(lease.isValid()).as("%s", lease).isTrue();
        }
        long token = lease.fencingToken();
        assertThat(token % BLOCK).as("all of it one store grant: " + lease).isPositive();
        // Held with no pass for more than two lease times: only the watchdog keeps it (a release that
        // confirms a hold before passing it renews it too, so the passes above prove nothing of this). The
        // lease time leaves a stall of the loaded lanes about a second; with 300 ms, the CI run of stop 36
        // found a lease just passed on already not valid.
        int renewalsBefore = counter.get().renewBatches.size();
        Thread.sleep(3_500);
        assertThat(lease.isValid()).as("%s", lease).isTrue();
        assertThat(counter.get().renewBatches.size())
                .as("renewals while it was held")
                .isGreaterThan(renewalsBefore);
        assertThat(c.describe("renewed").get(0).holders()).singleElement().satisfies(h -> assertThat(h.fencingToken())
                .isEqualTo(token - token % BLOCK));
        lease.close();
    }

    @Test
    void readLocksAndFairLocksDoNotPass() throws Exception {
        LockClient c = client(new AtomicReference<>(), b -> {});
        assertThat(hammer(c.fairLock("fair"), 3, 30)).allMatch(t -> t % BLOCK == 0);
        assertThat(hammer(c.readWriteLock("rw").readLock(), 3, 30, false)).allMatch(t -> t % BLOCK == 0);
    }

    /**
     * A thread that downgrades (write, then read, then releases the write) still reads: the write hold
     * must not pass to another thread of the client waiting to write, which would write while it reads.
     */
    @Test
    void aWriteHoldIsNotPassedWhileItsThreadStillReadsAfterADowngrade() throws Exception {
        LockClient c = client(new AtomicReference<>(), b -> b.localHandoff(32, Duration.ofSeconds(30)));
        DistributedLock write = c.readWriteLock("downgrade").writeLock();
        DistributedLock read = c.readWriteLock("downgrade").readLock();
        write.lock();
        CompletableFuture<Boolean> otherWriter = new CompletableFuture<>();
        Thread writer = new Thread(() -> {
            try {
                otherWriter.complete(write.tryLock(3, TimeUnit.SECONDS));
                if (otherWriter.join()) {
                    write.unlock();
                }
            } catch (Throwable e) {
                otherWriter.completeExceptionally(e);
            }
        });
        writer.start();
        Thread.sleep(100); // the writer is queued behind us in the client
        read.lock(); // downgrade
        write.unlock();
        Thread.sleep(300);
        assertThat(otherWriter)
                .as("another thread got the write lock while this one still holds the read lock")
                .isNotDone();
        read.unlock();
        assertThat(otherWriter.get(5, TimeUnit.SECONDS)).isTrue();
        writer.join();
    }

    /**
     * A waiter took a passed hold while its own attempt was still on its way to the store, and the chain
     * went back to the store before that attempt arrived: the store then grants the attempt to a caller
     * who no longer waits. The engine gives that grant back at once; kept, it would block every other
     * client until its lease ran out.
     */
    @Test
    void aStoreGrantArrivingAfterTheWaiterTookAPassIsGivenBack() throws Exception {
        AtomicReference<CountingBackend> counter = new AtomicReference<>();
        // The waiter's own attempt reaches the store only once the chain went back to it: a gate, not a
        // delay (under load, the pass, the hand-over and the release took longer than a 300 ms delay, and
        // the attempt found the hold still there). The chain bound is not under test either: at the
        // default 50 ms from the grant, a slow start ends the chain before the release, and nothing passes.
        LockClient c =
                client(counter, b -> b.leaseTime(Duration.ofSeconds(30)).localHandoff(32, Duration.ofSeconds(10)));
        LockClient other = client(new AtomicReference<>(), b -> {});
        DistributedLock lock = c.lock("late-grant");
        Lease first = lock.acquire(Duration.ofSeconds(1));
        CompletableFuture<Void> gate = new CompletableFuture<>();
        counter.get().acquireGate = gate;
        CompletableFuture<Lease> waiter = lock.acquireAsync(Duration.ofSeconds(10));
        long until = System.nanoTime() + TimeUnit.SECONDS.toNanos(5);
        while (counter.get().acquires.get() < 2 && System.nanoTime() - until < 0) {
            Thread.sleep(1);
        }
        first.close();
        Lease second = waiter.get(5, TimeUnit.SECONDS);
        assertThat(second.fencingToken()).as("passed, not granted").isEqualTo(first.fencingToken() + 1);
        second.close();
        counter.get().acquireGate = null;
        gate.complete(null);
        while (counter.get().grants.get() < 2 && System.nanoTime() - until < 0) {
            Thread.sleep(1);
        }
        assertThat(counter.get().grants.get())
                .as("the waiter's own attempt granted after the chain ended")
                .isEqualTo(2);
        try (Lease next = other.lock("late-grant").acquire(Duration.ofSeconds(5))) {
            assertThat(next.fencingToken()).isGreaterThan(second.fencingToken());
        }
    }

    @Test
    void aCancelledWaiterDoesNotKeepTheHold() throws Exception {
        LockClient c = client(new AtomicReference<>(), b -> {});
        LockClient other = client(new AtomicReference<>(), b -> {});
        DistributedLock lock = c.lock("cancel");
        Lease held = lock.acquire(Duration.ofSeconds(1));
        CompletableFuture<Lease> waiter = lock.acquireAsync(Duration.ofSeconds(10));
        Thread.sleep(20);
        waiter.cancel(false);
        held.close();
        try (Lease lease = other.lock("cancel").acquire(Duration.ofSeconds(2))) {
            assertThat(lease.isValid()).isTrue();
        }
        assertThatThrownBy(waiter::join).isInstanceOf(java.util.concurrent.CancellationException.class);
    }
}
