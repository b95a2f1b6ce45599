package dev.dlock.internal;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;

import dev.dlock.Lease;
import dev.dlock.LeaseLostException;
import dev.dlock.LockClient;
import dev.dlock.mem.MemoryStore;
import java.time.Duration;
import java.util.concurrent.CancellationException;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.ThreadLocalRandom;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.atomic.AtomicReference;
import org.junit.jupiter.api.AfterEach;
import org.junit.jupiter.api.Test;

/**
 * A lease's lost signal ({@code whenLost()}) is made only when somebody asks for it (issue 25): whenever it
 * is asked for, before the lease ends, after, or while it ends on another thread, it is the one future of
 * that lease and it ends as the lease did: cancelled after a clean end, completed with the loss, off the
 * engine's threads, after a loss.
 */
class LostSignalTest {
    private final String storeName =
            "lost-signal-" + Long.toHexString(ThreadLocalRandom.current().nextLong());
    private final MemoryStore store = MemoryStore.named(storeName);
    private final LockClient client = LockClient.builder("mem:" + storeName)
            .namespace("signals")
            .leaseTime(Duration.ofMillis(600))
            .build();

    @AfterEach
    void close() {
        client.close();
    }

    @Test
    void aSignalAskedForOnlyAfterAReleaseIsCancelled() {
        Lease lease = client.lock("x").acquire(Duration.ofSeconds(5));
        lease.close();

        CompletableFuture<LeaseLostException> signal = lease.whenLost();
        assertThat(signal.isCancelled()).isTrue();
        assertThatThrownBy(signal::join).isInstanceOf(CancellationException.class);
        assertThat(lease.whenLost()).as("the same future every time").isSameAs(signal);
    }

    @Test
    void aSignalAskedForBeforeAReleaseIsTheOneTheReleaseCancels() {
        Lease lease = client.lock("x").acquire(Duration.ofSeconds(5));
        CompletableFuture<LeaseLostException> signal = lease.whenLost();
        assertThat(lease.whenLost()).isSameAs(signal);
        assertThat(signal).isNotDone();

        lease.close();

        assertThat(signal.isCancelled()).isTrue();
    }

    @Test
    void aSignalAskedForOnlyAfterALossCompletesWithTheLoss() throws Exception {
        Lease lease = client.lock("x").acquire(Duration.ofSeconds(5));
        store.forgetEverything();
        awaitInvalid(lease);

        CompletableFuture<LeaseLostException> signal = lease.whenLost();
        assertThat(signal.isCancelled()).as("a loss, not a clean end").isFalse();
        assertThat(signal.get(5, TimeUnit.SECONDS).getMessage()).contains("'x'", "was lost");
        assertThat(lease.whenLost()).isSameAs(signal);
    }

    @Test
    void aSignalAskedForBeforeALossCompletesOffTheEngineThreads() throws Exception {
        Lease lease = client.lock("x").acquire(Duration.ofSeconds(5));
        AtomicReference<Thread> toldOn = new AtomicReference<>();
        CompletableFuture<LeaseLostException> told =
                lease.whenLost().whenComplete((lost, error) -> toldOn.set(Thread.currentThread()));

        store.forgetEverything();

        assertThat(told.get(5, TimeUnit.SECONDS)).isInstanceOf(LeaseLostException.class);
        // The common pool, or the thread per task CompletableFuture puts in its place on a machine of one
        // or two cores: never the scheduler thread that ran the renewal which found the lease gone.
        assertThat(toldOn.get().getName()).doesNotStartWith("dlock-");
        assertThat(toldOn.get()).isNotSameAs(Thread.currentThread());
    }

    /**
     * The ending is kept before the future is read, and the future before the ending is read: a thread that
     * asks while another ends the lease never gets a future nobody ends. Without the second read of the
     * ending in {@code whenLost()} this failed at round 70.
     */
    @Test
    void aSignalAskedForWhileTheLeaseEndsOnAnotherThreadEndsToo() throws Exception {
        for (int round = 0; round < 2_000; round++) {
            Lease lease = client.lock("race").acquire(Duration.ofSeconds(5));
            CompletableFuture<CompletableFuture<LeaseLostException>> asked =
                    CompletableFuture.supplyAsync(lease::whenLost);
            lease.close();
            CompletableFuture<LeaseLostException> signal = asked.get(5, TimeUnit.SECONDS);
            assertThat(signal.isCancelled()).as("round %d", round).isTrue();
            assertThat(lease.whenLost()).isSameAs(signal);
        }
    }

    private static void awaitInvalid(Lease lease) throws InterruptedException {
        long until = System.nanoTime() + TimeUnit.SECONDS.toNanos(5);
        while (lease.isValid() && System.nanoTime() < until) {
            Thread.sleep(10);
        }
        assertThat(lease.isValid()).as("the watchdog found the lease gone").isFalse();
    }
}
