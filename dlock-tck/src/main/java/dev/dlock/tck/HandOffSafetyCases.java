package dev.dlock.tck;

import static org.assertj.core.api.Assertions.assertThat;

import dev.dlock.DistributedLock;
import dev.dlock.Lease;
import dev.dlock.LeaseLostException;
import dev.dlock.LockClient;
import dev.dlock.LockListener;
import dev.dlock.LockTimeoutException;
import java.time.Duration;
import java.util.List;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.CopyOnWriteArrayList;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.TimeoutException;
import java.util.concurrent.atomic.AtomicBoolean;
import org.junit.jupiter.api.Test;

/**
 * Hand-off between threads of one client when the store took the hold back (an operator's {@code
 * forceRelease}, lost store state): a thread that asked after that never gets the hold passed while
 * another client holds it; every holder of the passed hold learns that it was lost; closing a client
 * while its threads pass a lock among themselves leaves nothing held at the store (another client gets
 * it at once), also when a request of one of those threads is on its way as the client closes. The clients here use
 * a long hand-off bound, so that only the engine's confirmation rule, not the bound, keeps a pass away.
 */
abstract class HandOffSafetyCases extends ContractSection {
    private static final Duration LONG_CHAIN = Duration.ofMinutes(1);

    HandOffSafetyCases(LockContractTest contract) {
        super(contract);
    }

    private LockClient longChainClient(LockListener listener) {
        return client(b -> b.localHandoff(32, LONG_CHAIN).listener(listener));
    }

    @Test
    void aWaiterThatAskedAfterAForceReleaseGetsNoPassWhileAnotherClientHolds() throws Exception {
        LockClient a = longChainClient(new LockListener() {});
        Lease first = a.lock("forced-pass").acquire(LONG_WAIT);
        assertThat(client().forceRelease("forced-pass")).isTrue();
        Lease other = client().lock("forced-pass").acquire(LONG_WAIT);
        CompletableFuture<Lease> second = a.lock("forced-pass").acquireAsync(LONG_WAIT);
        sleep(Duration.ofMillis(300));
        assertThat(second).as("A's second thread waits while B holds").isNotDone();
        first.close();
        try {
            Lease passed = second.get(500, TimeUnit.MILLISECONDS);
            assertThat(passed.isValid() && other.isValid())
                    .as(
                            "A's second thread (token %d) was handed a valid lease while B (token %d) holds",
                            passed.fencingToken(), other.fencingToken())
                    .isFalse();
        } catch (TimeoutException stillWaiting) {
            // right: it waits for B
        }
        assertThat(other.isValid()).isTrue();
        other.close();
        try (Lease next = second.get(LONG_WAIT.toMillis(), TimeUnit.MILLISECONDS)) {
            assertThat(next.fencingToken()).isGreaterThan(other.fencingToken());
        }
    }

    @Test
    void theForceReleasedHolderIsToldWhenItReleasesWithAThreadOfItsClientWaiting() throws Exception {
        List<String> lostEvents = new CopyOnWriteArrayList<>();
        LockClient a = longChainClient(new LockListener() {
            @Override
            public void lost(String name, String reason) {
                lostEvents.add(name);
            }
        });
        Lease first = a.lock("forced-told").acquire(LONG_WAIT);
        assertThat(client().forceRelease("forced-told")).isTrue();
        Lease other = client().lock("forced-told").acquire(LONG_WAIT);
        CompletableFuture<Lease> second = a.lock("forced-told").acquireAsync(LONG_WAIT);
        sleep(Duration.ofMillis(100));
        first.close();
        assertThat(whenLost(first)).as("the released holder's lost signal").hasMessageContaining("forced-told");
        awaitTrue(Duration.ofSeconds(5), () -> lostEvents.contains("forced-told"));
        other.close();
        second.get(LONG_WAIT.toMillis(), TimeUnit.MILLISECONDS).close();
    }

    @Test
    void everyLinkOfAPassedHoldIsToldWhenTheStoreTookItBack() throws Exception {
        LockClient a = longChainClient(new LockListener() {});
        Lease first = a.lock("forced-chain").acquire(LONG_WAIT);
        CompletableFuture<Lease> second = a.lock("forced-chain").acquireAsync(LONG_WAIT);
        sleep(Duration.ofMillis(100));
        first.close();
        Lease secondLease = second.get(LONG_WAIT.toMillis(), TimeUnit.MILLISECONDS);
        boolean passed = secondLease.fencingToken() == first.fencingToken() + 1;
        assertThat(passed)
                .as("the hold was passed (the store reserves token room)")
                .isEqualTo(reservesTokenRoom());
        assertThat(client().forceRelease("forced-chain")).isTrue();
        secondLease.close();
        assertThat(whenLost(secondLease)).isInstanceOf(LeaseLostException.class);
        if (passed) {
            assertThat(whenLost(first))
                    .as("the first link held the hold the store took back")
                    .isInstanceOf(LeaseLostException.class);
        } else {
            assertThat(first.whenLost()).as("a clean release to the store").isCancelled();
        }
    }

    /**
     * Closing a client while its threads pass a lock among themselves leaves nothing held: another client
     * gets the lock at once, not after the closed client's lease (30 s here) ran out.
     */
    @Test
    void closingAClientWhileItsThreadsPassALockLeavesNothingHeld() throws Exception {
        for (int round = 0; round < 5; round++) {
            LockClient a = client(b -> b.leaseTime(Duration.ofSeconds(30)));
            DistributedLock lock = a.lock("close-chain");
            AtomicBoolean stop = new AtomicBoolean();
            List<Thread> threads = new CopyOnWriteArrayList<>();
            for (int i = 0; i < 4; i++) {
                Thread t = new Thread(() -> {
                    while (!stop.get()) {
                        try {
                            lock.lock();
                            lock.unlock();
                        } catch (RuntimeException closed) {
                            return; // the client closed under it
                        }
                    }
                });
                t.start();
                threads.add(t);
            }
            sleep(Duration.ofMillis(200));
            a.close();
            stop.set(true);
            for (Thread t : threads) {
                t.join(LONG_WAIT.toMillis());
            }
            assertFreeAtOnce("close-chain", "round " + round);
        }
    }

    /**
     * The interleaving behind a close during a chain, forced: a thread of the client decided to ask the
     * store (the next waiter of a chain that went back to the store) just before the client started
     * closing, and its request leaves only when the close is under way. Whether the store grants it before
     * or after the close ends, nothing may stay held.
     */
    @Test
    void anAcquireOnItsWayWhenTheClientClosesLeavesNothingHeld() throws Exception {
        LockClient a = client(b -> b.leaseTime(Duration.ofSeconds(30)));
        FreezableBackend.PausedCall paused = wire(a).pauseNextAcquire();
        CompletableFuture<Lease> asking = new CompletableFuture<>();
        Thread asker = new Thread(() -> {
            try {
                asking.complete(a.lock("close-on-its-way").acquire(LONG_WAIT));
            } catch (RuntimeException e) {
                asking.completeExceptionally(e);
            }
        });
        asker.start();
        awaitTrue(Duration.ofSeconds(10), paused::caught);
        Thread closer = new Thread(a::close);
        closer.start();
        sleep(Duration.ofMillis(300)); // the close runs meanwhile, as far as it goes without this request
        paused.send();
        closer.join(LONG_WAIT.toMillis());
        asker.join(LONG_WAIT.toMillis());
        assertThat(closer.isAlive() || asker.isAlive())
                .as("close and the asking thread ended")
                .isFalse();
        assertThat(asking).as("the asking thread was told the client closed").isCompletedExceptionally();
        assertFreeAtOnce("close-on-its-way", "after the close");
    }

    /** Another client gets {@code name} well within the closed client's 30 s lease. */
    private void assertFreeAtOnce(String name, String when) {
        long start = System.nanoTime();
        try (Lease next = client().lock(name).acquire(Duration.ofSeconds(10))) {
            assertThat(next.isValid()).as(when).isTrue();
        } catch (LockTimeoutException e) {
            throw new AssertionError(
                    when + ": another client did not get '" + name + "' within " + millisSince(start)
                            + " ms: the closed client left it held",
                    e);
        }
    }

    /** The lease's lost signal, which must come (not a cancellation, as for a clean release). */
    private static LeaseLostException whenLost(Lease lease) throws Exception {
        try {
            return lease.whenLost().get(10, TimeUnit.SECONDS);
        } catch (TimeoutException e) {
            throw new AssertionError("whenLost() not completed within 10 s", e);
        } catch (java.util.concurrent.CancellationException e) {
            throw new AssertionError("whenLost() cancelled, as for a clean release", e);
        }
    }
}
