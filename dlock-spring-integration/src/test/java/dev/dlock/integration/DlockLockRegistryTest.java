package dev.dlock.integration;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;

import dev.dlock.Lease;
import dev.dlock.LeaseLostException;
import dev.dlock.LockClient;
import java.time.Duration;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.CountDownLatch;
import java.util.concurrent.ExecutionException;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.atomic.AtomicReference;
import java.util.concurrent.locks.Lock;
import org.junit.jupiter.api.AfterEach;
import org.junit.jupiter.api.Test;
import org.springframework.integration.support.locks.DistributedLock;
import org.springframework.scheduling.concurrent.ThreadPoolTaskScheduler;

/** The registry's {@link Lock} semantics, time-to-live, renewal and refusals, on the in-memory store. */
class DlockLockRegistryTest {
    private final LockClient client =
            LockClient.builder("mem:si-registry").namespace("unit").build();
    private final DlockLockRegistry registry = new DlockLockRegistry(client, Duration.ofSeconds(5));

    @AfterEach
    void close() {
        client.close();
    }

    @Test
    void badInputIsRefusedWithTheNameOfTheProblem() {
        assertThatThrownBy(() -> new DlockLockRegistry(null)).hasMessageContaining("client");
        assertThatThrownBy(() -> new DlockLockRegistry(client, null)).hasMessageContaining("leaseTime");
        assertThatThrownBy(() -> new DlockLockRegistry(client, Duration.ofMillis(5)))
                .isInstanceOf(IllegalArgumentException.class)
                .hasMessageContaining("leaseTime must be between PT0.01S and PT8760H, got PT0.005S");
        assertThatThrownBy(() -> registry.obtain(42))
                .isInstanceOf(IllegalArgumentException.class)
                .hasMessage("lockKey must be a String (the dlock lock name), got a java.lang.Integer");
        assertThatThrownBy(() -> registry.obtain(null))
                .isInstanceOf(IllegalArgumentException.class)
                .hasMessageContaining("got null");
        assertThatThrownBy(() -> registry.obtain("")).isInstanceOf(IllegalArgumentException.class);
        DistributedLock lock = registry.obtain("a");
        assertThatThrownBy(() -> lock.lock(null)).hasMessageContaining("ttl");
        assertThatThrownBy(() -> lock.lock(Duration.ofDays(366)))
                .isInstanceOf(IllegalArgumentException.class)
                .hasMessageContaining("leaseTime must be at most");
        assertThatThrownBy(() -> lock.tryLock(null, Duration.ofSeconds(1))).hasMessageContaining("waitTime");
        assertThat(registry.currentLease("a"))
                .as("a refused call leaves nothing held")
                .isEmpty();
    }

    @Test
    void aLockIsReentrantPerThreadAcrossInstancesAndOnlyItsOwnerUnlocksIt() throws Exception {
        Lock first = registry.obtain("orders");
        Lock second = registry.obtain("orders");
        first.lock();
        assertThat(second.tryLock())
                .as("the owning thread re-enters through another instance")
                .isTrue();
        assertThat(otherThread(() -> registry.obtain("orders").tryLock())).isFalse();
        assertThat(otherThread(() -> {
                    try {
                        first.unlock();
                        return "unlocked";
                    } catch (IllegalMonitorStateException e) {
                        return e.getMessage();
                    }
                }))
                .contains("is not held by the current thread");

        second.unlock();
        assertThat(otherThread(() -> registry.obtain("orders").tryLock()))
                .as("held until unlocked once per lock")
                .isFalse();
        first.unlock();
        assertThat(registry.currentLease("orders")).isEmpty();
        assertThatThrownBy(first::unlock).isInstanceOf(IllegalMonitorStateException.class);
        assertThat(otherThread(() -> {
                    Lock lock = registry.obtain("orders");
                    boolean got = lock.tryLock();
                    lock.unlock();
                    return got;
                }))
                .isTrue();
    }

    @Test
    void waitingEndsWithTheReleaseOrAnInterrupt() throws Exception {
        Lock lock = registry.obtain("batch");
        lock.lock();
        CompletableFuture<Boolean> waiter = CompletableFuture.supplyAsync(() -> {
            try {
                boolean got = registry.obtain("batch").tryLock(10, TimeUnit.SECONDS);
                registry.obtain("batch").unlock();
                return got;
            } catch (InterruptedException e) {
                throw new AssertionError(e);
            }
        });
        Thread.sleep(200);
        assertThat(waiter).isNotDone();
        lock.unlock();
        assertThat(waiter.get(5, TimeUnit.SECONDS)).isTrue();

        lock.lock();
        AtomicReference<Throwable> outcome = new AtomicReference<>();
        CountDownLatch waiting = new CountDownLatch(1);
        Thread interruptible = new Thread(() -> {
            waiting.countDown();
            try {
                registry.obtain("batch").lockInterruptibly();
                outcome.set(new AssertionError("locked while another thread held the lock"));
            } catch (Throwable t) {
                outcome.set(t);
            }
        });
        interruptible.start();
        waiting.await();
        Thread.sleep(200);
        interruptible.interrupt();
        interruptible.join(5000);
        assertThat(outcome.get()).isInstanceOf(InterruptedException.class);
        lock.unlock();
        assertThat(otherThread(() -> {
                    Lock again = registry.obtain("batch");
                    boolean got = again.tryLock();
                    again.unlock();
                    return got;
                }))
                .as("the interrupted waiter left nothing held")
                .isTrue();
    }

    @Test
    void conditionsAndARenewalSchedulerAreRefused() {
        assertThatThrownBy(() -> registry.obtain("a").newCondition())
                .isInstanceOf(UnsupportedOperationException.class)
                .hasMessageContaining("distributed wait set");
        assertThatThrownBy(() -> registry.setRenewalTaskScheduler(new ThreadPoolTaskScheduler()))
                .isInstanceOf(UnsupportedOperationException.class)
                .hasMessageContaining("watchdog renews every held lease");
    }

    @Test
    void theGrantHasTheRegistrysLeaseTimeOrTheTimeToLiveOfTheCall() throws Exception {
        DistributedLock lock = registry.obtain("ttl");
        lock.lock();
        assertThat(remaining("ttl")).isGreaterThan(Duration.ofSeconds(4)).isLessThanOrEqualTo(Duration.ofSeconds(5));
        lock.lock(Duration.ofSeconds(60));
        assertThat(remaining("ttl")).as("re-entry keeps the lease time").isLessThanOrEqualTo(Duration.ofSeconds(5));
        lock.unlock();
        lock.unlock();

        lock.lock(Duration.ofSeconds(60));
        assertThat(remaining("ttl")).isGreaterThan(Duration.ofSeconds(50));
        lock.unlock();
        assertThat(lock.tryLock(Duration.ofSeconds(1), Duration.ofMillis(900))).isTrue();
        assertThat(remaining("ttl")).isLessThanOrEqualTo(Duration.ofMillis(900));
        lock.unlock();
    }

    @Test
    void renewingExtendsTheOwnersLeaseAndIsRefusedToOthers() throws Exception {
        assertThatThrownBy(() -> registry.renewLock("renewed"))
                .isInstanceOf(IllegalMonitorStateException.class)
                .hasMessageContaining("lock 'renewed' is not held by the current thread");
        DistributedLock lock = registry.obtain("renewed");
        lock.lock();
        long token = registry.currentLease("renewed").orElseThrow().fencingToken();
        registry.renewLock("renewed", Duration.ofSeconds(60));
        assertThat(remaining("renewed")).isGreaterThan(Duration.ofSeconds(50));
        assertThat(otherThread(() -> {
                    try {
                        registry.renewLock("renewed");
                        return "renewed";
                    } catch (IllegalMonitorStateException e) {
                        return "refused";
                    }
                }))
                .isEqualTo("refused");
        registry.renewLock("renewed");
        assertThat(remaining("renewed")).isLessThanOrEqualTo(Duration.ofSeconds(5));
        assertThat(registry.currentLease("renewed").orElseThrow().fencingToken())
                .as("renewal keeps the grant")
                .isEqualTo(token);
        lock.unlock();
    }

    @Test
    void aLostLeaseIsReportedOnReentryAndUnlockAndTheHoldEnds() throws Exception {
        try (LockClient unrenewed = LockClient.builder("mem:si-registry")
                .namespace("unit")
                .renewal(false)
                .build()) {
            DlockLockRegistry short_ = new DlockLockRegistry(unrenewed, Duration.ofMillis(200));
            DistributedLock lock = short_.obtain("lost");
            lock.lock();
            Lease lease = short_.currentLease("lost").orElseThrow();
            lease.whenLost().get(5, TimeUnit.SECONDS);
            assertThatThrownBy(lock::tryLock)
                    .isInstanceOf(LeaseLostException.class)
                    .hasMessageContaining("its lease is gone");
            assertThatThrownBy(lock::unlock).isInstanceOf(LeaseLostException.class);
            assertThat(short_.currentLease("lost")).as("the hold ended").isEmpty();
            // The holder is told at its local deadline, which falls a drift margin (4 ms for 200 ms) before
            // the store's own expiry: the store may still hold the grant for those few milliseconds.
            assertThat(lock.tryLock(2, TimeUnit.SECONDS))
                    .as("taken again once the store's expiry passed")
                    .isTrue();
            lock.unlock();
        }
    }

    @Test
    void executeLockedRunsUnderTheLockWithAFencingTokenThatGrows() throws Exception {
        long first = registry.executeLocked(
                "job", () -> registry.currentLease("job").orElseThrow().fencingToken());
        try (LockClient other =
                LockClient.builder("mem:si-registry").namespace("unit").build()) {
            DlockLockRegistry elsewhere = new DlockLockRegistry(other);
            long second = elsewhere.executeLocked(
                    "job",
                    Duration.ofSeconds(1),
                    () -> elsewhere.currentLease("job").orElseThrow().fencingToken());
            assertThat(second).isGreaterThan(first);
        }
        assertThat(registry.currentLease("job")).isEmpty();
    }

    private Duration remaining(String key) {
        return registry.currentLease(key).orElseThrow().remaining();
    }

    private static <T> T otherThread(java.util.concurrent.Callable<T> task)
            throws InterruptedException, ExecutionException {
        CompletableFuture<T> result = new CompletableFuture<>();
        Thread t = new Thread(() -> {
            try {
                result.complete(task.call());
            } catch (Throwable e) {
                result.completeExceptionally(e);
            }
        });
        t.start();
        t.join(10_000);
        return result.get();
    }
}
