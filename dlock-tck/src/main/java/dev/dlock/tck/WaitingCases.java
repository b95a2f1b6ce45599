package dev.dlock.tck;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;

import dev.dlock.DistributedLock;
import dev.dlock.Lease;
import dev.dlock.LockClient;
import dev.dlock.LockTimeoutException;
import java.time.Duration;
import java.util.Optional;
import java.util.concurrent.CancellationException;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.ExecutionException;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.atomic.AtomicReference;
import org.junit.jupiter.api.Test;

/**
 * Waiting for a lock: timed waits end at their deadline, interrupts are answered (or ignored by {@code
 * lock()}), a release wakes a waiter at once, and asynchronous acquisition completes, times out and can be
 * cancelled.
 */
abstract class WaitingCases extends ContractSection {
    WaitingCases(LockContractTest contract) {
        super(contract);
    }

    @Test
    void timedTryLockReturnsWithinTheWaitPlusAMargin() throws Exception {
        try (Lease held = client().lock("timed").acquire(LONG_WAIT)) {
            DistributedLock lock = client().lock("timed");
            long start = System.nanoTime();
            assertThat(lock.tryLock(700, TimeUnit.MILLISECONDS)).isFalse();
            assertThat(millisSince(start)).isBetween(650L, 700L + 1500L);
            assertThat(held.isValid()).isTrue();
        }
    }

    @Test
    void acquireTimesOutWithLockTimeoutException() {
        try (Lease held = client().lock("timeout").acquire(LONG_WAIT)) {
            long start = System.nanoTime();
            assertThatThrownBy(() -> client().lock("timeout").acquire(Duration.ofMillis(600)))
                    .isInstanceOf(LockTimeoutException.class)
                    .hasMessageContaining("timeout");
            assertThat(millisSince(start)).isBetween(550L, 600L + 1500L);
            assertThat(held.isValid()).isTrue();
        }
    }

    @Test
    void lockInterruptiblyRespondsToInterruptAndLeavesNothingHeld() throws Exception {
        LockClient holder = client();
        Lease held = holder.lock("interrupt").acquire(LONG_WAIT);
        DistributedLock lock = client().lock("interrupt");
        AtomicReference<Throwable> outcome = new AtomicReference<>();
        Thread waiter = new Thread(() -> {
            try {
                lock.lockInterruptibly();
                outcome.set(new AssertionError("acquired although held elsewhere"));
            } catch (Throwable e) {
                outcome.set(e);
            }
        });
        waiter.start();
        Thread.sleep(300);
        waiter.interrupt();
        waiter.join(5_000);
        assertThat(waiter.isAlive()).isFalse();
        assertThat(outcome.get()).isInstanceOf(InterruptedException.class);
        held.close();
        Optional<Lease> next = client().lock("interrupt").tryAcquire();
        assertThat(next).as("the interrupted waiter holds nothing").isPresent();
        next.get().close();
    }

    @Test
    void lockIgnoresInterruptsAndKeepsWaiting() throws Exception {
        Lease held = client().lock("uninterruptible").acquire(LONG_WAIT);
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
        Thread.sleep(500);
        assertThat(outcome.get()).as("lock() keeps waiting after an interrupt").isNull();
        held.close();
        waiter.join(15_000);
        assertThat(outcome.get()).isEqualTo("locked, still interrupted");
    }

    @Test
    void waiterIsWokenPromptlyByReleaseNotByLeaseExpiry() throws Exception {
        LockClient a = client(b -> b.leaseTime(Duration.ofSeconds(30)));
        Lease held = a.lock("wakeup").acquire(LONG_WAIT);
        CompletableFuture<Lease> waiting = client().lock("wakeup").acquireAsync(LONG_WAIT);
        Thread.sleep(500);
        assertThat(waiting).isNotDone();
        long released = System.nanoTime();
        held.close();
        Lease next = waiting.get(10, TimeUnit.SECONDS);
        assertThat(millisSince(released))
                .as("woken by the release, long before the 30 s lease would expire")
                .isLessThan(5_000);
        next.close();
    }

    @Test
    void asyncAcquireCompletesWithALease() throws Exception {
        Lease lease = client().lock("async").acquireAsync(LONG_WAIT).get(20, TimeUnit.SECONDS);
        assertThat(lease.isValid()).isTrue();
        assertThat(client().lock("async").tryAcquire()).isEmpty();
        lease.close();
    }

    @Test
    void cancellingAnAsyncAcquireLeavesNoHolderBehind() throws Exception {
        Lease held = client().lock("cancel").acquire(LONG_WAIT);
        CompletableFuture<Lease> waiting = client().lock("cancel").acquireAsync(LONG_WAIT);
        Thread.sleep(300);
        assertThat(waiting.cancel(true)).isTrue();
        held.close();
        Thread.sleep(300);
        Optional<Lease> next = client().lock("cancel").tryAcquire();
        assertThat(next).as("the cancelled waiter did not take the lock").isPresent();
        next.get().close();
        assertThatThrownBy(waiting::get).isInstanceOf(CancellationException.class);
    }

    @Test
    void asyncAcquireTimesOutExceptionally() {
        try (Lease held = client().lock("async-timeout").acquire(LONG_WAIT)) {
            CompletableFuture<Lease> waiting = client().lock("async-timeout").acquireAsync(Duration.ofMillis(400));
            assertThatThrownBy(() -> waiting.get(10, TimeUnit.SECONDS))
                    .isInstanceOf(ExecutionException.class)
                    .hasCauseInstanceOf(LockTimeoutException.class);
            assertThat(held.isValid()).isTrue();
        }
    }
}
