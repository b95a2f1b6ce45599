package dev.dlock.internal;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;

import dev.dlock.Lease;
import dev.dlock.LockBackendException;
import dev.dlock.LockClient;
import dev.dlock.LockException;
import dev.dlock.LockListener;
import java.time.Duration;
import java.util.ArrayList;
import java.util.List;
import java.util.Optional;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.CountDownLatch;
import java.util.concurrent.ExecutionException;
import java.util.concurrent.ThreadLocalRandom;
import java.util.concurrent.TimeUnit;
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
            b.backendDecorator(d -> {
                FaultyBackend f = new FaultyBackend(d);
                backend.set(f);
                return f;
            });
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
        LockListener slowListener = new LockListener() {
            @Override
            public void failed(String name, Duration waited, Throwable cause) {
                if (name.equals("close-other") && closing.getCount() > 0) {
                    closing.countDown();
                    try {
                        Thread.sleep(1_000); // close() is now between "closed" and failing the next queue
                    } catch (InterruptedException e) {
                        Thread.currentThread().interrupt();
                    }
                }
            }
        };
        Engine engine = Engine.open(
                STORE,
                context -> {
                    FaultyBackend b =
                            new FaultyBackend(Engine.providerFor(STORE).open(context));
                    f.set(b);
                    return b;
                },
                EngineOptions.builder()
                        .namespace(namespace)
                        .listener(slowListener)
                        .build());
        try {
            CompletableFuture<Lease> blocked = engine.lock("close-other").acquireAsync(Duration.ofSeconds(30));
            f.get().acquireDelay = r -> 400;
            // A name whose queue close() fails after the other one's, so its grant arrives in between.
            CompletableFuture<Lease> granted = null;
            for (int i = 0; granted == null; i++) {
                assertThat(i).as("a name ordered after 'close-other'").isLessThan(50);
                String name = "close-late-" + i;
                CompletableFuture<Lease> waiting = engine.lock(name).acquireAsync(Duration.ofSeconds(30));
                if (engine.queues.keySet().iterator().next().name().equals("close-other")) {
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
}
