package dev.dlock.tck;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;

import dev.dlock.DistributedLock;
import dev.dlock.Lease;
import dev.dlock.LeaseLostException;
import dev.dlock.LockClient;
import dev.dlock.LockListener;
import dev.dlock.LockTimeoutException;
import java.time.Duration;
import java.util.List;
import java.util.concurrent.CopyOnWriteArrayList;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.atomic.AtomicInteger;
import org.junit.jupiter.api.Test;

/**
 * Lost leases and listeners: the lost signal fires when a lease runs out or is force-released, not when it
 * is released; unlocking a lost lock says so; listeners see events in order, and a slow listener does not
 * cost a lease.
 */
abstract class LostLeaseCases extends ContractSection {
    LostLeaseCases(LockContractTest contract) {
        super(contract);
    }

    @Test
    void lostSignalFiresWhenALeaseRunsOutWithoutRenewal() throws Exception {
        LockClient c = crashableClient();
        Lease lease = c.lock("lost-signal").acquire(LONG_WAIT);
        assertThat(lease.whenLost()).isNotDone();
        LeaseLostException signal = lease.whenLost().get(shortLease().toMillis() + 5_000, TimeUnit.MILLISECONDS);
        assertThat(signal).hasMessageContaining("lost-signal");
        assertThat(lease.isValid()).isFalse();
        assertThatThrownBy(lease::checkValid).isInstanceOf(LeaseLostException.class);
        assertThat(lease.remaining()).isEqualTo(Duration.ZERO);
    }

    @Test
    void unlockOfALostLockThrowsLeaseLost() throws Exception {
        LockClient c = crashableClient();
        DistributedLock lock = c.lock("lost-unlock");
        lock.lock();
        Lease lease = lock.currentLease().orElseThrow();
        lease.whenLost().get(shortLease().toMillis() + 5_000, TimeUnit.MILLISECONDS);
        assertThatThrownBy(lock::unlock).isInstanceOf(LeaseLostException.class).hasMessageContaining("lost-unlock");
        assertThat(lock.isHeldByCurrentThread()).isFalse();
    }

    @Test
    void closeCancelsTheLostSignal() {
        Lease lease = client().lock("cancel-signal").acquire(LONG_WAIT);
        lease.close();
        assertThat(lease.whenLost()).isCancelled();
        assertThatThrownBy(lease::checkValid)
                .isInstanceOf(LeaseLostException.class)
                .hasMessageContaining("released");
    }

    @Test
    void forceReleaseIsNoticedByTheHolderAsALoss() throws Exception {
        LockClient holder = client(b -> b.leaseTime(shortLease()));
        Lease lease = holder.lock("forced").acquire(LONG_WAIT);
        LockClient admin = client();
        assertThat(admin.forceRelease("forced")).isTrue();
        LeaseLostException signal = lease.whenLost().get(shortLease().toMillis() + 5_000, TimeUnit.MILLISECONDS);
        assertThat(signal).hasMessageContaining("forced");
        try (Lease next = admin.lock("forced").acquire(LONG_WAIT)) {
            assertThat(next.fencingToken()).isGreaterThan(lease.fencingToken());
        }
    }

    @Test
    void listenerSeesAcquireReleaseAndTimeout() throws Exception {
        List<String> events = new CopyOnWriteArrayList<>();
        LockClient c = client(b -> b.listener(new LockListener() {
            @Override
            public void acquired(String name, Duration waited) {
                events.add("acquired " + name);
            }

            @Override
            public void released(String name, Duration held) {
                events.add("released " + name);
            }

            @Override
            public void failed(String name, Duration waited, Throwable cause) {
                events.add("failed " + name + " " + cause.getClass().getSimpleName());
            }
        }));
        c.lock("events").acquire(LONG_WAIT).close();
        try (Lease held = client().lock("events").acquire(LONG_WAIT)) {
            assertThatThrownBy(() -> c.lock("events").acquire(Duration.ofMillis(100)))
                    .isInstanceOf(LockTimeoutException.class);
            assertThat(held.isValid()).isTrue();
        }
        // Events arrive in order on the client's listener thread, shortly after they happened.
        awaitTrue(Duration.ofSeconds(5), () -> events.size() >= 3);
        assertThat(events).containsExactly("acquired events", "released events", "failed events LockTimeoutException");
    }

    @Test
    void aListenerSlowerThanTheLeaseDoesNotCostTheLease() throws Exception {
        AtomicInteger calls = new AtomicInteger();
        LockListener sleepy = new LockListener() {
            @Override
            public void acquired(String name, Duration waited) {
                nap();
            }

            @Override
            public void renewed(int leases, int lost) {
                nap();
            }

            private void nap() {
                calls.incrementAndGet();
                try {
                    Thread.sleep(shortLease().toMillis() * 2);
                } catch (InterruptedException e) {
                    Thread.currentThread().interrupt();
                }
            }
        };
        LockClient a = client(b -> b.leaseTime(shortLease()).listener(sleepy));
        Lease lease = a.lock("slow-listener").acquire(LONG_WAIT);
        long until = System.nanoTime() + shortLease().multipliedBy(4).toNanos();
        while (System.nanoTime() - until < 0) {
            assertThat(lease.isValid())
                    .as("lease valid while the listener sleeps")
                    .isTrue();
            Thread.sleep(50);
        }
        assertThat(calls.get()).as("the listener was called").isPositive();
        assertThat(client().lock("slow-listener").tryAcquire()).isEmpty();
        lease.close();
    }
}
