package dev.dlock.internal;

import static org.assertj.core.api.Assertions.assertThat;

import dev.dlock.Lease;
import dev.dlock.LeaseLostException;
import dev.dlock.LockClient;
import dev.dlock.spi.BackendContext;
import dev.dlock.spi.ForwardingLockBackend;
import dev.dlock.spi.LockBackend;
import dev.dlock.spi.LockBackendProvider;
import dev.dlock.spi.RenewRequest;
import java.time.Duration;
import java.util.List;
import java.util.Set;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.CompletionStage;
import java.util.concurrent.ThreadLocalRandom;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.atomic.AtomicInteger;
import org.junit.jupiter.api.AfterEach;
import org.junit.jupiter.api.BeforeEach;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.Timeout;

/**
 * A store clock that jumps, as the engine sees it through {@code BackendEvents.storeClock}: the memory
 * store wrapped so that its renewal answers, and answers the test makes up ({@link Clocked#answer}), carry
 * a store time that the test can step. The store time is the test's monotonic clock plus an offset, so only
 * the steps the test makes move it against the client's clock.
 */
@Timeout(60)
class StoreClockJumpTest {
    private static final String SOURCE = "clock-test:1";
    private static final Duration LEASE = Duration.ofSeconds(30);

    private LockClient client;
    private Clocked store;

    @BeforeEach
    void open() {
        String uri =
                "mem:clock-jump-" + Long.toHexString(ThreadLocalRandom.current().nextLong());
        client = LockClient.builder(context -> {
                    store = new Clocked(LockBackendProvider.factoryFor(uri).open(context), context.events());
                    return store;
                })
                .leaseTime(LEASE)
                .build();
    }

    @AfterEach
    void close() {
        client.close();
    }

    @Test
    void aForwardJumpLargerThanWhatRemainsLosesTheLeaseAtOnce() throws Exception {
        Lease lease = client.lock("big").acquire(Duration.ofSeconds(5));
        store.answer(0);
        store.answer(40_000);
        assertThat(lease.isValid()).isFalse();
        LeaseLostException lost = lease.whenLost().get(10, TimeUnit.SECONDS);
        assertThat(lost.getMessage()).contains("the store's clock (" + SOURCE + ") jumped forward by 40");
        assertThat(store.renewals.get()).as("before its first renewal").isZero();
    }

    @Test
    void aJumpWithinTheToleranceChangesNothing() throws Exception {
        Lease lease = client.lock("small").acquire(Duration.ofSeconds(5));
        store.answer(0);
        long before = deadline(lease);
        Thread.sleep(1_000); // a window of 1 s tolerates 12 ms (1% + 2 ms)
        store.answer(8);
        assertThat(deadline(lease) - before).isBetween(-1_000_000L, 1_000_000L);
        assertThat(lease.isValid()).isTrue();
    }

    @Test
    void aJumpSmallerThanWhatRemainsShortensTheLeaseByIt() throws Exception {
        Lease lease = client.lock("medium").acquire(Duration.ofSeconds(5));
        store.answer(0);
        long before = deadline(lease);
        store.answer(10_000);
        long cut = before - deadline(lease);
        assertThat(cut).isBetween(TimeUnit.MILLISECONDS.toNanos(9_990), TimeUnit.MILLISECONDS.toNanos(10_100));
        assertThat(lease.isValid()).isTrue();
        assertThat(lease.remaining()).isLessThan(LEASE.minusSeconds(10));
    }

    @Test
    void aBackwardStepChangesNothingAndBecomesTheBaseline() throws Exception {
        Lease lease = client.lock("back").acquire(Duration.ofSeconds(5));
        store.answer(0);
        long before = deadline(lease);
        store.answer(-20_000);
        Thread.sleep(200);
        store.answer(-20_000);
        assertThat(deadline(lease) - before).isBetween(-1_000_000L, 1_000_000L);
        assertThat(lease.isValid()).isTrue();
    }

    @Test
    void readingsOutOfOrderCountAJumpOnceAndNoneWhereThereWasNone() throws Exception {
        Lease lease = client.lock("order").acquire(Duration.ofSeconds(5));
        store.answer(0);
        long before = deadline(lease);
        // Request a is sent, then b; the store serves b, its clock jumps 5 s, it serves a; b answers first.
        long sentA = System.nanoTime();
        Thread.sleep(20);
        long sentB = System.nanoTime();
        long storeB = Clocked.micros(System.nanoTime(), 0);
        store.events.storeClock(SOURCE, storeB, sentB, System.nanoTime());
        Thread.sleep(20);
        long storeA = Clocked.micros(System.nanoTime(), 5_000);
        store.events.storeClock(SOURCE, storeA, sentA, System.nanoTime());
        long afterA = deadline(lease);
        assertThat(before - afterA).as("one jump of 5 s").isBetween(4_950_000_000L, 5_500_000_000L);
        // An answer served before the jump, arriving late: it looks like a step back and is not a baseline.
        long sentC = System.nanoTime() - TimeUnit.MILLISECONDS.toNanos(30);
        store.events.storeClock(SOURCE, Clocked.micros(sentC, 0), sentC, System.nanoTime());
        Thread.sleep(100);
        store.answer(5_000); // after the jump, as every answer from now on
        assertThat(deadline(lease) - afterA).as("the jump is not counted again").isBetween(-1_000_000L, 1_000_000L);
        assertThat(lease.isValid()).isTrue();
    }

    @Test
    void aRenewalOnItsWayWhileAJumpIsCountedIsCutToo() throws Exception {
        Lease lease = client.lock("in-flight").acquire(Duration.ofSeconds(5));
        store.answer(0);
        CompletableFuture<Void> gate = new CompletableFuture<>();
        store.renewGate = gate;
        CompletableFuture<Void> extend = CompletableFuture.runAsync(() -> lease.extend(LEASE));
        long until = System.nanoTime() + TimeUnit.SECONDS.toNanos(20);
        while (store.renewals.get() == 0 && System.nanoTime() - until < 0) {
            Thread.sleep(10);
        }
        store.answer(10_000); // the store may have served the renewal before this jump
        gate.complete(null);
        extend.get(20, TimeUnit.SECONDS);
        assertThat(lease.isValid()).isTrue();
        assertThat(lease.remaining())
                .as("the renewal's deadline is cut by the jump")
                .isLessThan(Duration.ofSeconds(21));
    }

    @Test
    void aReadingDatedBeforeItsRequestIsRefused() {
        long now = System.nanoTime();
        org.assertj.core.api.Assertions.assertThatThrownBy(
                        () -> store.events.storeClock(SOURCE, Clocked.micros(now, 0), now, now - 1))
                .isInstanceOf(IllegalArgumentException.class)
                .hasMessageContaining("before its request was sent");
        org.assertj.core.api.Assertions.assertThatThrownBy(() -> store.events.storeClock(null, 0, now, now))
                .isInstanceOf(NullPointerException.class);
    }

    /**
     * The lease's local deadline on the {@code System.nanoTime()} scale, to well within a millisecond:
     * {@code remaining()} is read before the clock, so each sample is late, never early; the least of a few
     * is close.
     */
    private static long deadline(Lease lease) {
        long best = Long.MAX_VALUE;
        for (int i = 0; i < 5; i++) {
            long remaining = lease.remaining().toNanos();
            best = Math.min(best, remaining + System.nanoTime());
        }
        return best;
    }

    /** The memory store, with a clock reading on every renewal answer; {@link #answer} makes one up. */
    static final class Clocked extends ForwardingLockBackend {
        /** The store clock's origin on the monotonic scale. */
        private static final long ORIGIN_NANOS = System.nanoTime();

        private static final long ORIGIN_MICROS = TimeUnit.MILLISECONDS.toMicros(System.currentTimeMillis());
        final BackendContext.BackendEvents events;
        final AtomicInteger renewals = new AtomicInteger();
        private volatile long offsetMillis;
        /** When set, renewals reach the store only once it completes. */
        volatile CompletableFuture<Void> renewGate;

        Clocked(LockBackend delegate, BackendContext.BackendEvents events) {
            super(delegate);
            this.events = events;
        }

        /** The store's time at {@code nanos} on the monotonic scale, with its clock {@code offsetMillis} ahead. */
        static long micros(long nanos, long offsetMillis) {
            return ORIGIN_MICROS + TimeUnit.NANOSECONDS.toMicros(nanos - ORIGIN_NANOS) + offsetMillis * 1_000;
        }

        /** An answer with the store clock now {@code offsetMillis} ahead of the test's (from now on). */
        void answer(long offsetMillis) {
            this.offsetMillis = offsetMillis;
            long sent = System.nanoTime();
            long storeMicros = micros(System.nanoTime(), offsetMillis);
            events.storeClock(SOURCE, storeMicros, sent, System.nanoTime());
        }

        @Override
        public CompletionStage<Set<String>> renew(List<RenewRequest> batch) {
            renewals.incrementAndGet();
            long sent = System.nanoTime();
            CompletableFuture<Void> gate = renewGate;
            CompletionStage<Set<String>> answer =
                    gate == null ? delegate.renew(batch) : gate.thenCompose(x -> delegate.renew(batch));
            return answer.thenApply(lost -> {
                events.storeClock(SOURCE, micros(System.nanoTime(), offsetMillis), sent, System.nanoTime());
                return lost;
            });
        }
    }
}
