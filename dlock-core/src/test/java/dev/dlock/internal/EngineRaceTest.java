package dev.dlock.internal;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;

import dev.dlock.DistributedLock;
import dev.dlock.Lease;
import dev.dlock.LockBackendException;
import dev.dlock.LockClient;
import dev.dlock.LockException;
import dev.dlock.LockListener;
import dev.dlock.LockTimeoutException;
import dev.dlock.spi.LockBackendProvider;
import java.time.Duration;
import java.util.ArrayList;
import java.util.List;
import java.util.Optional;
import java.util.concurrent.CancellationException;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.CopyOnWriteArrayList;
import java.util.concurrent.CountDownLatch;
import java.util.concurrent.ExecutionException;
import java.util.concurrent.ThreadLocalRandom;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.TimeoutException;
import java.util.concurrent.atomic.AtomicReference;
import java.util.function.BooleanSupplier;
import java.util.function.Consumer;
import org.junit.jupiter.api.AfterEach;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.Timeout;

/**
 * Races between a store's answer and a caller giving up, and other edges of the engine, provoked with a
 * {@link FaultyBackend} over the memory store. Each test names the promise it checks; timings are
 * generous so that a loaded machine cannot fail them.
 */
@Timeout(60)
class EngineRaceTest {
    private static final String STORE = "mem:engine-race";

    private final List<LockClient> clients = new ArrayList<>();
    private final String namespace =
            "race" + Long.toHexString(ThreadLocalRandom.current().nextLong() & 0xffffff);

    @AfterEach
    void close() {
        clients.forEach(LockClient::close);
    }

    private LockClient client(Consumer<LockClient.Builder> options) {
        LockClient.Builder b = LockClient.builder(STORE).namespace(namespace);
        options.accept(b);
        LockClient c = b.build();
        clients.add(c);
        return c;
    }

    private LockClient client() {
        return client(b -> {});
    }

    private LockClient faulty(AtomicReference<FaultyBackend> backend, Consumer<LockClient.Builder> options) {
        return client(b -> {
            b.backend(b.backend().andThen(d -> {
                FaultyBackend f = new FaultyBackend(d);
                backend.set(f);
                return f;
            }));
            options.accept(b);
        });
    }

    private static void awaitTrue(Duration max, String what, BooleanSupplier condition) throws InterruptedException {
        long deadline = System.nanoTime() + max.toNanos();
        while (!condition.getAsBoolean()) {
            assertThat(System.nanoTime() - deadline).as(what + " within " + max).isNegative();
            Thread.sleep(10);
        }
    }

    /** The wait has ended, or ends within 5 s, with a {@code LockException}. */
    private static void assertEndsWithLockException(CompletableFuture<Lease> wait) {
        assertThatThrownBy(() -> wait.get(5, TimeUnit.SECONDS))
                .isInstanceOf(ExecutionException.class)
                .cause()
                .isInstanceOf(LockException.class);
    }

    private boolean heldByNobody(LockClient c, String name) {
        return c.describe(name).stream().allMatch(i -> i.holders().isEmpty() && i.waiters() == 0);
    }

    @Test
    void aGrantArrivingAfterTheOperationTimeoutIsReleased() throws Exception {
        AtomicReference<FaultyBackend> f = new AtomicReference<>();
        LockClient slow = faulty(f, b -> b.operationTimeout(Duration.ofMillis(200)));
        f.get().acquireDelay = r -> 700;
        assertThatThrownBy(() -> slow.lock("late").tryAcquire()).isInstanceOf(LockBackendException.class);
        awaitTrue(
                Duration.ofSeconds(5),
                "the late acquire reached the store",
                () -> f.get().acquiresAtStore.size() == 1);
        LockClient other = client();
        awaitTrue(Duration.ofSeconds(3), "the late grant was released", () -> heldByNobody(other, "late"));
    }

    @Test
    void aFairWaiterCancelledBeforeItsAttemptReachedTheStoreLeavesNoQueueEntry() throws Exception {
        LockClient holder = client();
        Lease held = holder.fairLock("fair-cancel").acquire(Duration.ofSeconds(1));
        AtomicReference<FaultyBackend> f = new AtomicReference<>();
        LockClient waiter = faulty(f, b -> {});
        f.get().acquireDelay = r -> 300;
        CompletableFuture<Lease> waiting = waiter.fairLock("fair-cancel").acquireAsync(Duration.ofSeconds(20));
        waiting.cancel(true); // before the attempt reaches the store, which then queues the waiter
        awaitTrue(
                Duration.ofSeconds(5),
                "the attempt reached the store",
                () -> f.get().acquiresAtStore.size() == 1);
        held.close();
        LockClient third = client();
        awaitTrue(Duration.ofSeconds(3), "a third client gets the free fair lock", () -> {
            Optional<Lease> lease = third.fairLock("fair-cancel").tryAcquire();
            lease.ifPresent(Lease::close);
            return lease.isPresent();
        });
    }

    @Test
    void aWriterCancelledBeforeItsAttemptReachedTheStoreDoesNotHoldReadersBack() throws Exception {
        LockClient reader = client();
        Lease read = reader.readWriteLock("rw-cancel").readLock().acquire(Duration.ofSeconds(1));
        AtomicReference<FaultyBackend> f = new AtomicReference<>();
        LockClient writer = faulty(f, b -> {});
        f.get().acquireDelay = r -> 300;
        CompletableFuture<Lease> waiting =
                writer.readWriteLock("rw-cancel").writeLock().acquireAsync(Duration.ofSeconds(20));
        waiting.cancel(true);
        awaitTrue(
                Duration.ofSeconds(5),
                "the attempt reached the store",
                () -> f.get().acquiresAtStore.size() == 1);
        LockClient third = client();
        awaitTrue(Duration.ofSeconds(3), "a new reader shares the read lock", () -> {
            Optional<Lease> lease = third.readWriteLock("rw-cancel").readLock().tryAcquire();
            lease.ifPresent(Lease::close);
            return lease.isPresent();
        });
        read.close();
    }

    @Test
    void aSubscriptionSetUpAfterItsCallTimedOutIsCancelled() throws Exception {
        Lease held = client().lock("late-sub").acquire(Duration.ofSeconds(1));
        AtomicReference<FaultyBackend> f = new AtomicReference<>();
        LockClient slow = faulty(f, b -> b.operationTimeout(Duration.ofMillis(200)));
        f.get().subscribeDelayMillis = 700;
        assertThatThrownBy(() -> slow.lock("late-sub").acquire(Duration.ofSeconds(5)))
                .isInstanceOf(LockBackendException.class)
                .hasMessageContaining("subscribe");
        Thread.sleep(1_000); // the store sets the subscription up at 700 ms
        awaitTrue(
                Duration.ofSeconds(3),
                "the late subscription was cancelled",
                () -> f.get().liveSubscriptions.get() == 0);
        held.close();
    }

    /**
     * A store that refuses wake-ups while it answers calls (a Redis client's notification connection not
     * back yet after a restart) does not end a wait: the waiter asks again and gets the lock once it is
     * released. Seen in HoldBackTest, where the wait failed at once with the refusal.
     */
    @Test
    void aRefusedSubscriptionDoesNotEndTheWait() throws Exception {
        Lease held = client().lock("refused-sub").acquire(Duration.ofSeconds(1));
        AtomicReference<FaultyBackend> f = new AtomicReference<>();
        LockClient waiter = faulty(f, b -> {});
        f.get().subscribesToRefuse.set(3);
        CompletableFuture<Lease> waiting = waiter.lock("refused-sub").acquireAsync(Duration.ofSeconds(10));
        awaitTrue(
                Duration.ofSeconds(5),
                "the refusals were seen",
                () -> f.get().subscribesToRefuse.get() == 0);
        assertThat(waiting).as("still waiting after the refusals").isNotDone();
        held.close();
        try (Lease lease = waiting.get(5, TimeUnit.SECONDS)) {
            assertThat(lease.isValid()).isTrue();
        }
    }

    @Test
    void aWaitWhoseSubscriptionsAreRefusedTimesOutNamingTheRefusal() throws Exception {
        Lease held = client().lock("refused-all").acquire(Duration.ofSeconds(1));
        AtomicReference<FaultyBackend> f = new AtomicReference<>();
        LockClient waiter = faulty(f, b -> {});
        f.get().subscribesToRefuse.set(Integer.MAX_VALUE);
        // Two seconds: the message names the refusal only once one was seen, and on a loaded CI machine the
        // first busy answer and refusal may take a while (a 600 ms wait is a candidate for an unexplained
        // core-tck failure whose log did not reach the CI output).
        assertThatThrownBy(() -> waiter.lock("refused-all").acquire(Duration.ofSeconds(2)))
                .isInstanceOf(LockTimeoutException.class)
                .hasMessageContaining("refused wake-ups")
                .hasMessageContaining("Currently not connected (test)");
        held.close();
    }

    @Test
    void closeWaitsForAGrantThatArrivesAfterItsCallTimedOutAndReleasesIt() throws Exception {
        AtomicReference<FaultyBackend> f = new AtomicReference<>();
        LockClient slow = faulty(f, b -> b.operationTimeout(Duration.ofSeconds(1)));
        f.get().acquireDelay = r -> 1_500;
        assertThatThrownBy(() -> slow.lock("late-close").tryAcquire()).isInstanceOf(LockBackendException.class);
        slow.close(); // the grant reaches the store 0.5 s from now; close() waits up to 1 s for it
        assertThat(f.get().acquiresAtStore).hasSize(1);
        assertThat(heldByNobody(client(), "late-close"))
                .as("the late grant was released before close() returned")
                .isTrue();
    }

    @Test
    void closeReleasesAGrantThatWasOnItsWay() throws Exception {
        AtomicReference<FaultyBackend> f = new AtomicReference<>();
        LockClient c = faulty(f, b -> {});
        f.get().acquireDelay = r -> 300;
        CompletableFuture<Lease> waiting = c.lock("close-inflight").acquireAsync(Duration.ofSeconds(5));
        c.close();
        assertEndsWithLockException(waiting);
        awaitTrue(
                Duration.ofSeconds(5),
                "the attempt reached the store",
                () -> f.get().acquiresAtStore.size() == 1);
        LockClient other = client();
        awaitTrue(Duration.ofSeconds(3), "the grant was released", () -> heldByNobody(other, "close-inflight"));
    }

    @Test
    void aGrantArrivingWhileCloseFailsTheWaitsEndsTheWaitToo() throws Exception {
        Lease other = client().lock("close-other").acquire(Duration.ofSeconds(1));
        AtomicReference<FaultyBackend> f = new AtomicReference<>();
        CountDownLatch closing = new CountDownLatch(1);
        Engine engine = Engine.open(
                STORE,
                LockBackendProvider.factoryFor(STORE).andThen(d -> {
                    FaultyBackend b = new FaultyBackend(d);
                    f.set(b);
                    return b;
                }),
                new EngineOptions(
                        EngineOptions.DEFAULTS.leaseMillis(),
                        EngineOptions.DEFAULTS.renewal(),
                        EngineOptions.DEFAULTS.waitTime(),
                        EngineOptions.DEFAULTS.localQueueLimit(),
                        namespace,
                        EngineOptions.DEFAULTS.operationTimeout(),
                        EngineOptions.DEFAULTS.listener(),
                        EngineOptions.DEFAULTS.handoffPasses(),
                        EngineOptions.DEFAULTS.handoffTime()));
        // close() fails the waits one queue at a time; the first waiter's leaving the store queue is slow,
        // so close() is between "closed" and failing the next queue when that queue's grant arrives.
        f.get().beforeCancelWait = key -> {
            if (key.name().equals("close-other") && closing.getCount() > 0) {
                closing.countDown();
                try {
                    Thread.sleep(1_000);
                } catch (InterruptedException e) {
                    Thread.currentThread().interrupt();
                }
            }
        };
        try {
            CompletableFuture<Lease> blocked = engine.lock("close-other").acquireAsync(Duration.ofSeconds(30));
            f.get().acquireDelay = r -> 400;
            // A name whose queue close() fails after the other one's, so its grant arrives in between.
            CompletableFuture<Lease> granted = null;
            // Each try lands after 'close-other' with a chance of at least 1/16 (the map's first table has
            // 16 bins, and within one bin 'close-other' came first): 1,000 tries make a miss negligible,
            // where 50 missed once in a while (about 4% when 'close-other' sits in the last bin).
            for (int i = 0; granted == null; i++) {
                assertThat(i).as("a name ordered after 'close-other'").isLessThan(1_000);
                String name = "close-late-" + i;
                CompletableFuture<Lease> waiting = engine.lock(name).acquireAsync(Duration.ofSeconds(30));
                if (engine.acquisitions.waitingKeys().iterator().next().name().equals("close-other")) {
                    granted = waiting;
                } else {
                    waiting.cancel(true);
                }
            }
            engine.close();
            assertThat(closing.getCount()).isZero();
            assertEndsWithLockException(blocked);
            assertEndsWithLockException(granted);
        } finally {
            engine.close();
            other.close();
        }
    }

    @Test
    void aCancelledMultiLockReleasesWhatItTookAndStopsWaiting() throws Exception {
        LockClient holder = client();
        Lease second = holder.lock("multi-b").acquire(Duration.ofSeconds(1));
        AtomicReference<FaultyBackend> f = new AtomicReference<>();
        LockClient c = faulty(f, b -> {});
        CountDownLatch secondPartStarted = new CountDownLatch(1);
        CountDownLatch cancelled = new CountDownLatch(1);
        f.get().acquireDelay = r -> r.key().name().equals("multi-a") ? 100 : 0;
        f.get().beforeAcquire = r -> {
            if (r.key().name().equals("multi-b") && secondPartStarted.getCount() > 0) {
                secondPartStarted.countDown();
                try {
                    cancelled.await(5, TimeUnit.SECONDS);
                } catch (InterruptedException e) {
                    Thread.currentThread().interrupt();
                }
            }
        };
        CompletableFuture<Lease> multi = c.multiLock("multi-a", "multi-b").acquireAsync(Duration.ofSeconds(30));
        assertThat(secondPartStarted.await(5, TimeUnit.SECONDS)).isTrue();
        multi.cancel(true); // while the second part is being started
        cancelled.countDown();
        LockClient other = client();
        awaitTrue(Duration.ofSeconds(3), "the first part was released", () -> heldByNobody(other, "multi-a"));
        int attempts = f.get().acquiresAtStore.size();
        second.close(); // would wake a part that still waits
        Thread.sleep(300);
        assertThat(f.get().acquiresAtStore).as("no attempt after the cancel").hasSize(attempts);
    }

    @Test
    void aCancelledWaiterSendsNoAttemptAfterTheCancel() throws Exception {
        LockClient holder = client();
        Lease held = holder.lock("stray").acquire(Duration.ofSeconds(1));
        AtomicReference<FaultyBackend> f = new AtomicReference<>();
        LockClient c = faulty(f, b -> {});
        f.get().subscribeDelayMillis = 300;
        CompletableFuture<Lease> waiting = c.lock("stray").acquireAsync(Duration.ofSeconds(20));
        waiting.cancel(true); // while subscribing
        Thread.sleep(800);
        assertThat(f.get().acquiresAtStore)
                .as("only the attempt before the cancel")
                .hasSize(1);
        held.close();
    }

    @Test
    void aNewHeadWaitsForTheSharedSubscriptionBeforeRelyingOnIt() throws Exception {
        LockClient holder = client(); // lease time 30 s: only a wake-up ends the wait early
        Lease held = holder.lock("shared-sub").acquire(Duration.ofSeconds(1));
        AtomicReference<FaultyBackend> f = new AtomicReference<>();
        LockClient c = faulty(f, b -> {});
        f.get().subscribeDelayMillis = 800;
        CompletableFuture<Lease> first = c.lock("shared-sub").acquireAsync(Duration.ofSeconds(20));
        CompletableFuture<Lease> second = c.lock("shared-sub").acquireAsync(Duration.ofSeconds(8));
        first.cancel(true); // the second becomes head while the subscription is on its way
        Thread.sleep(200);
        held.close(); // a release the subscription cannot report yet
        Lease lease = second.get(5, TimeUnit.SECONDS);
        lease.close();
    }

    @Test
    void extendRacingARenewalNeverLeavesTheStoreWithAShorterLease() throws Exception {
        AtomicReference<FaultyBackend> f = new AtomicReference<>();
        LockClient c = faulty(f, b -> b.leaseTime(Duration.ofMillis(2_400)));
        Lease lease = c.lock("extend-race").acquire(Duration.ofSeconds(1));
        f.get().holdNextRenew = true; // the automatic renewal (at 800 ms) is held on its way
        assertThat(f.get().heldRenewReceived.await(5, TimeUnit.SECONDS)).isTrue();
        CompletableFuture<Void> extended = CompletableFuture.runAsync(() -> lease.extend(Duration.ofSeconds(20)));
        try {
            extended.get(500, TimeUnit.MILLISECONDS); // at the store first, unless it waits for the renewal
        } catch (TimeoutException waitsForTheRenewal) {
            // fine: the store will see the renewal first
        }
        f.get().renewGate.countDown(); // the renewal's 2.4 s now start at the store
        extended.get(5, TimeUnit.SECONDS);
        Thread.sleep(3_000);
        LockClient other = client();
        Optional<Lease> stolen = other.lock("extend-race").tryAcquire();
        boolean valid = lease.isValid();
        stolen.ifPresent(Lease::close);
        assertThat(valid).as("the holder's lease is valid").isTrue();
        assertThat(stolen)
                .as("nobody else can take a lease its holder believes valid")
                .isEmpty();
        lease.close();
    }

    @Test
    void lockIsNotInterruptible() throws Exception {
        LockClient holder = client();
        Lease held = holder.lock("uninterruptible").acquire(Duration.ofSeconds(1));
        DistributedLock lock = client().lock("uninterruptible");
        AtomicReference<Object> outcome = new AtomicReference<>();
        Thread waiter = new Thread(() -> {
            try {
                lock.lock();
                outcome.set(Thread.currentThread().isInterrupted() ? "locked, still interrupted" : "locked");
                lock.unlock();
            } catch (Throwable e) {
                outcome.set(e);
            }
        });
        waiter.start();
        Thread.sleep(300);
        waiter.interrupt();
        Thread.sleep(300);
        assertThat(outcome.get())
                .as("lock() ignores the interrupt and keeps waiting")
                .isNull();
        held.close();
        waiter.join(10_000);
        assertThat(outcome.get()).isEqualTo("locked, still interrupted");
    }

    @Test
    void tryLockIgnoresTheInterruptStatus() {
        AtomicReference<FaultyBackend> f = new AtomicReference<>();
        LockClient c = faulty(f, b -> {});
        f.get().acquireDelay = r -> 100; // the answer is not there at once
        DistributedLock lock = c.lock("try-interrupted");
        Thread.currentThread().interrupt();
        try {
            assertThat(lock.tryLock()).isTrue();
            assertThat(Thread.currentThread().isInterrupted()).isTrue();
        } finally {
            Thread.interrupted();
        }
        lock.unlock();
    }

    @Test
    void describeAndForceReleaseRejectBadNamesAsBadInput() {
        LockClient c = client();
        assertThatThrownBy(() -> c.describe(""))
                .isInstanceOf(IllegalArgumentException.class)
                .hasMessageContaining("empty");
        assertThatThrownBy(() -> c.describe(null)).isInstanceOf(IllegalArgumentException.class);
        assertThatThrownBy(() -> c.forceRelease("x".repeat(2000)))
                .isInstanceOf(IllegalArgumentException.class)
                .hasMessageContaining("1024");
    }

    @Test
    void durationsTooLongToComputeWithAreRejected() {
        LockClient.Builder b = LockClient.builder(STORE);
        Duration forever = Duration.ofSeconds(Long.MAX_VALUE);
        assertThatThrownBy(() -> b.leaseTime(forever))
                .isInstanceOf(IllegalArgumentException.class)
                .hasMessageContaining("leaseTime");
        assertThatThrownBy(() -> b.operationTimeout(forever))
                .isInstanceOf(IllegalArgumentException.class)
                .hasMessageContaining("operationTimeout");
        LockClient c = client();
        assertThatThrownBy(() -> c.lock("long").withLeaseTime(Duration.ofDays(400 * 365)))
                .isInstanceOf(IllegalArgumentException.class)
                .hasMessageContaining("leaseTime");
        try (Lease lease = c.lock("long").acquire(Duration.ofSeconds(1))) {
            assertThatThrownBy(() -> lease.extend(forever))
                    .isInstanceOf(IllegalArgumentException.class)
                    .hasMessageContaining("leaseTime");
            assertThat(lease.isValid()).isTrue();
        }
        // A long wait is fine: it saturates.
        assertThat(c.lock("long").acquire(forever).isValid()).isTrue();
    }

    @Test
    void aCancelledWaitIsReportedToTheListener() throws Exception {
        List<Throwable> failures = new CopyOnWriteArrayList<>();
        LockClient c = client(b -> b.listener(new LockListener() {
            @Override
            public void failed(String name, Duration waited, Throwable cause) {
                failures.add(cause);
            }
        }));
        Lease held = client().lock("cancel-event").acquire(Duration.ofSeconds(1));
        CompletableFuture<Lease> waiting = c.lock("cancel-event").acquireAsync(Duration.ofSeconds(20));
        waiting.cancel(true);
        awaitTrue(Duration.ofSeconds(3), "the listener saw the cancelled wait", () -> failures.size() == 1);
        assertThat(failures.get(0)).isInstanceOf(CancellationException.class);
        held.close();
    }

    @Test
    void closeWithThousandsOfWaitersFailsThemAll() throws Exception {
        Lease held = client().lock("many").acquire(Duration.ofSeconds(1));
        LockClient c = client();
        List<CompletableFuture<Lease>> waiters = new ArrayList<>();
        for (int i = 0; i < 3_000; i++) {
            waiters.add(c.lock("many").acquireAsync(Duration.ofSeconds(30)));
        }
        // On a thread with a small stack, as application threads may have: the depth must not grow
        // with the number of waiters.
        AtomicReference<Throwable> closeFailure = new AtomicReference<>();
        Thread closer = new Thread(
                null,
                () -> {
                    try {
                        c.close();
                    } catch (Throwable e) {
                        closeFailure.set(e);
                    }
                },
                "closer",
                256 * 1024);
        closer.start();
        closer.join(30_000);
        assertThat(closeFailure.get()).isNull();
        for (CompletableFuture<Lease> w : waiters) {
            assertEndsWithLockException(w);
        }
        held.close();
    }
}
