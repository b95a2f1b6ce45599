package dev.dlock.internal;

import static org.assertj.core.api.Assertions.assertThat;

import dev.dlock.DistributedLock;
import dev.dlock.Lease;
import dev.dlock.LockClient;
import dev.dlock.spi.LockBackendProvider;
import java.time.Duration;
import java.util.ArrayList;
import java.util.List;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.ThreadLocalRandom;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.atomic.AtomicReference;
import org.junit.jupiter.api.AfterEach;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.Timeout;

/**
 * Engine properties that the contract suite cannot see from outside: how many calls reach the store
 * (renewal batching, the local queue, subscriptions) and how the local deadline is computed.
 */
@Timeout(60)
class EngineTest {
    private final List<LockClient> clients = new ArrayList<>();
    private final String namespace =
            "engine" + Long.toHexString(ThreadLocalRandom.current().nextLong() & 0xffffff);

    @AfterEach
    void close() {
        clients.forEach(LockClient::close);
    }

    private LockClient client(Duration leaseTime, AtomicReference<CountingBackend> counter) {
        LockClient c = LockClient.builder(
                        LockBackendProvider.factoryFor("mem:engine-test").andThen(b -> {
                            CountingBackend counting = new CountingBackend(b);
                            counter.set(counting);
                            return counting;
                        }))
                .namespace(namespace)
                .leaseTime(leaseTime)
                .build();
        clients.add(c);
        return c;
    }

    @Test
    void renewalsOfManyLeasesAreBatchedIntoOneCallPerTick() throws Exception {
        AtomicReference<CountingBackend> counter = new AtomicReference<>();
        LockClient c = client(Duration.ofMillis(1_200), counter);
        List<Lease> leases = new ArrayList<>();
        for (int i = 0; i < 1000; i++) {
            leases.add(c.lock("lease-" + i).acquire(Duration.ofSeconds(1)));
        }
        // Leases taken at different moments fall into step within a few renewal periods (400 ms).
        Thread.sleep(2_000);
        List<Integer> batches = counter.get().renewBatches;
        batches.clear();
        Thread.sleep(2_000); // five periods
        assertThat(leases).allMatch(Lease::isValid);
        assertThat(batches.size()).as("renew calls in 2 s: %s", batches).isBetween(3, 7);
        assertThat(batches).as("every call renews every lease: %s", batches).allMatch(size -> size == 1000);
        leases.forEach(Lease::close);
    }

    @Test
    void onlyTheHeadOfTheLocalQueueAsksTheStore() throws Exception {
        AtomicReference<CountingBackend> holderCounter = new AtomicReference<>();
        Lease held = client(Duration.ofSeconds(30), holderCounter).lock("queue").acquire(Duration.ofSeconds(1));
        AtomicReference<CountingBackend> counter = new AtomicReference<>();
        DistributedLock lock = client(Duration.ofSeconds(30), counter).lock("queue");
        List<CompletableFuture<Lease>> waiters = new ArrayList<>();
        for (int i = 0; i < 8; i++) {
            waiters.add(lock.acquireAsync(Duration.ofSeconds(30)));
        }
        Thread.sleep(1_000);
        assertThat(counter.get().acquires.get())
                .as("the head tried, subscribed, tried again; the seven behind it stayed local")
                .isEqualTo(2);
        assertThat(counter.get().subscribes.get()).isEqualTo(1);
        held.close();
        for (CompletableFuture<Lease> w : waiters) {
            w.get(10, TimeUnit.SECONDS).close();
        }
        assertThat(counter.get().subscribes.get())
                .as("one subscription served every waiter")
                .isEqualTo(1);
    }

    @Test
    void theLocalDeadlineCountsFromBeforeTheRequestWasSent() {
        AtomicReference<CountingBackend> counter = new AtomicReference<>();
        LockClient c = client(Duration.ofMillis(1_000), counter);
        counter.get().acquireDelayMillis = 400;
        try (Lease lease = c.lock("deadline").withRenewal(false).acquire(Duration.ofSeconds(5))) {
            // 1,000 ms lease - 400 ms in flight - drift (1% + 2 ms) leaves at most 588 ms.
            assertThat(lease.remaining()).isLessThanOrEqualTo(Duration.ofMillis(588));
            assertThat(lease.remaining()).isPositive();
        }
    }

    @Test
    void reentrantLockingCostsNoStoreCalls() {
        AtomicReference<CountingBackend> counter = new AtomicReference<>();
        DistributedLock lock = client(Duration.ofSeconds(30), counter).lock("reentrant");
        lock.lock();
        for (int i = 0; i < 100; i++) {
            lock.lock();
        }
        for (int i = 0; i < 100; i++) {
            lock.unlock();
        }
        assertThat(counter.get().acquires.get()).isEqualTo(1);
        assertThat(counter.get().releases.get()).isZero();
        lock.unlock();
        assertThat(counter.get().releases.get()).isEqualTo(1);
    }

    @Test
    void aLeaseWithoutRenewalIsNeverRenewed() throws Exception {
        AtomicReference<CountingBackend> counter = new AtomicReference<>();
        LockClient c = client(Duration.ofMillis(300), counter);
        Lease lease = c.lock("no-renew").withRenewal(false).acquire(Duration.ofSeconds(1));
        lease.whenLost().get(5, TimeUnit.SECONDS);
        assertThat(counter.get().renewBatches).isEmpty();
        assertThat(lease.isValid()).isFalse();
    }
}
