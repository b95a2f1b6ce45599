package dev.dlock.shedlock;

import static dev.dlock.shedlock.ShedLockKitTest.config;
import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;

import dev.dlock.Lease;
import dev.dlock.LockClient;
import java.time.Duration;
import java.util.Optional;
import java.util.concurrent.CancellationException;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.TimeUnit;
import net.javacrumbs.shedlock.core.SimpleLock;
import org.junit.jupiter.api.AfterEach;
import org.junit.jupiter.api.Test;

/** Inputs, the job's view of its lock, and the minimum hold's lease time, on the in-memory store. */
class DlockLockProviderTest {
    private final LockClient client =
            LockClient.builder("mem:provider-test").namespace("unit").build();
    private final DlockLockProvider provider = DlockLockProvider.of(client);

    @AfterEach
    void close() {
        client.close();
    }

    @Test
    void badInputIsRefusedWithTheNameOfTheProblem() {
        assertThatThrownBy(() -> DlockLockProvider.of(null)).hasMessageContaining("client");
        assertThatThrownBy(() -> provider.lock(null)).hasMessageContaining("lockConfiguration");
        assertThatThrownBy(() -> provider.lock(config("a", Duration.ofDays(366), Duration.ZERO)))
                .isInstanceOf(IllegalArgumentException.class)
                .hasMessageContaining("lockAtMostFor PT8784H is longer than the longest dlock lease");
        SimpleLock lock =
                provider.lock(config("a", Duration.ofSeconds(5), Duration.ZERO)).orElseThrow();
        assertThatThrownBy(() -> lock.extend(Duration.ofSeconds(1), Duration.ofSeconds(2)))
                .isInstanceOf(IllegalArgumentException.class)
                .hasMessageContaining("lockAtLeastFor PT2S must be zero or positive and not longer than lockAtMostFor");
        assertThatThrownBy(() -> lock.extend(Duration.ofSeconds(1), Duration.ofSeconds(-1)))
                .isInstanceOf(IllegalArgumentException.class);
        assertThatThrownBy(() -> lock.extend(null, Duration.ZERO)).hasMessageContaining("lockAtMostFor");
        lock.unlock(); // refused extensions leave the lock usable
        assertThatThrownBy(lock::unlock)
                .isInstanceOf(IllegalStateException.class)
                .hasMessageContaining("already unlocked or extended");
    }

    /**
     * The engine ends a lease a drift margin (1% + 2 ms) before the store does; an {@code extend} that finds
     * it ended answers empty only once the store let go too, so the next caller gets the lock at once (the
     * kit's {@code shouldNotBeAbleToExtendExpiredLock} checks that and failed once on a loaded machine).
     */
    @Test
    void anExtendThatFindsTheLockExpiredLeavesItFreeForTheNextCaller() throws Exception {
        SimpleLock lock = provider.lock(config("expired", Duration.ofMillis(1500), Duration.ZERO))
                .orElseThrow();
        Lease lease = DlockLockAssert.currentLease().orElseThrow();
        lease.whenLost().get(5, TimeUnit.SECONDS); // the watchdog saw the deadline pass: closing sends nothing
        assertThat(lock.extend(Duration.ofSeconds(5), Duration.ZERO)).isEmpty();
        Optional<SimpleLock> next = provider.lock(config("expired", Duration.ofSeconds(5), Duration.ZERO));
        assertThat(next).as("free once extend answered empty").isPresent();
        next.get().unlock();
    }

    @Test
    void nestedJobsSeeTheirInnermostLock() {
        SimpleLock outer = provider.lock(config("outer", Duration.ofSeconds(5), Duration.ZERO))
                .orElseThrow();
        long outerToken = DlockLockAssert.currentToken();
        SimpleLock inner = provider.lock(config("inner", Duration.ofSeconds(5), Duration.ZERO))
                .orElseThrow();
        assertThat(DlockLockAssert.currentLease().orElseThrow().name()).isEqualTo("inner");

        SimpleLock extended =
                inner.extend(Duration.ofSeconds(10), Duration.ZERO).orElseThrow();
        assertThat(DlockLockAssert.currentLease().orElseThrow().name()).isEqualTo("inner");
        SimpleLock outerExtended =
                outer.extend(Duration.ofSeconds(10), Duration.ZERO).orElseThrow();
        assertThat(DlockLockAssert.currentLease().orElseThrow().name())
                .as("an extended outer lock keeps its place")
                .isEqualTo("inner");
        extended.unlock();
        assertThat(DlockLockAssert.currentToken()).isEqualTo(outerToken);
        outerExtended.unlock();
        assertThat(DlockLockAssert.currentLease()).isEmpty();
    }

    @Test
    void aLockUnlockedOnAnotherThreadOrClosedWithItsClientIsForgotten() throws Exception {
        SimpleLock lock = provider.lock(config("handed-over", Duration.ofSeconds(5), Duration.ZERO))
                .orElseThrow();
        CompletableFuture.runAsync(lock::unlock).get(5, TimeUnit.SECONDS);
        assertThat(DlockLockAssert.currentLease()).isEmpty();

        LockClient other =
                LockClient.builder("mem:provider-test").namespace("unit").build();
        DlockLockProvider.of(other)
                .lock(config("abandoned", Duration.ofSeconds(5), Duration.ZERO))
                .orElseThrow();
        other.close();
        assertThat(DlockLockAssert.currentLease()).isEmpty();
    }

    @Test
    void aLostOuterLockIsForgottenWhenTheThreadTakesItsNextLock() throws Exception {
        provider.lock(config("lost", Duration.ofMillis(100), Duration.ZERO)).orElseThrow();
        Lease lost = DlockLockAssert.currentLease().orElseThrow();
        lost.whenLost().get(5, TimeUnit.SECONDS);
        assertThat(DlockLockAssert.currentLease()).contains(lost); // the job can see that it lost its lock

        SimpleLock next = provider.lock(config("next", Duration.ofSeconds(5), Duration.ZERO))
                .orElseThrow();
        next.unlock();
        assertThat(DlockLockAssert.currentLease()).isEmpty();
    }

    /** A minimum hold keeps the lock until {@code lockAtLeastFor} has passed, then releases it cleanly. */
    @Test
    void aMinimumHoldKeepsTheLockUntilLockAtLeastForHasPassedThenReleasesIt() throws Exception {
        Duration atLeast = Duration.ofMillis(1500);
        SimpleLock lock =
                provider.lock(config("report", Duration.ofSeconds(30), atLeast)).orElseThrow();
        long started = System.nanoTime();
        Lease lease = DlockLockAssert.currentLease().orElseThrow();
        lock.unlock();
        assertThat(lease.isValid()).isTrue();
        assertThat(provider.lock(config("report", Duration.ofSeconds(30), Duration.ZERO)))
                .as("held for lockAtLeastFor")
                .isEmpty();
        assertThatThrownBy(() -> lease.whenLost().get(5, TimeUnit.SECONDS))
                .as("released, not lost")
                .isInstanceOf(CancellationException.class);
        assertThat(System.nanoTime() - started).isGreaterThanOrEqualTo(atLeast.toNanos());
        provider.lock(config("report", Duration.ofSeconds(30), Duration.ZERO))
                .orElseThrow()
                .unlock();
    }

    /**
     * A {@code lockAtLeastFor} as long as {@code lockAtMostFor} reaches past the lease's own deadline (a drift
     * margin before its lease time, and what ends a hold on ZooKeeper and etcd): the lease is extended first.
     */
    @Test
    void aMinimumHoldAsLongAsTheLeaseExtendsItSoThatTheDeadlineCoversTheHold() {
        Duration atMost = Duration.ofMillis(1500);
        SimpleLock lock = provider.lock(config("report-long", atMost, atMost)).orElseThrow();
        long started = System.nanoTime();
        Lease lease = DlockLockAssert.currentLease().orElseThrow();
        lock.unlock();
        Duration remaining = lease.remaining();
        long elapsed = System.nanoTime() - started;
        assertThat(lease.isValid()).isTrue();
        assertThat(remaining).isGreaterThanOrEqualTo(atMost.minusNanos(elapsed));
    }
}
