package dev.dlock.micrometer;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;

import dev.dlock.DistributedLock;
import dev.dlock.Lease;
import dev.dlock.LockClient;
import dev.dlock.LockRejectedException;
import dev.dlock.LockTimeoutException;
import dev.dlock.spi.LockBackendProvider;
import dev.dlock.tck.FreezableBackend;
import java.time.Duration;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.atomic.AtomicReference;
import java.util.function.BooleanSupplier;

/**
 * Real lock traffic on the in-memory store that produces every meter and tag value the listener knows:
 * grants, holds, a timeout, a rejection, queued callers, a lease revoked by the store and one lost at its
 * deadline while the store could not be reached.
 */
final class Traffic {
    private Traffic() {}

    /** A store name of its own per call, so that tests do not share locks. */
    static String store() {
        return "mem:metrics-" + System.nanoTime();
    }

    static void eventually(BooleanSupplier condition, String what) throws InterruptedException {
        long deadline = System.nanoTime() + Duration.ofSeconds(30).toNanos();
        while (!condition.getAsBoolean()) {
            assertThat(System.nanoTime() < deadline).as(what).isTrue();
            Thread.sleep(10);
        }
    }

    /**
     * Runs the traffic; {@code whileQueued} runs while two callers of one client wait for {@code job:a}.
     */
    static void run(MicrometerLockListener metrics, Runnable whileQueued) throws Exception {
        String store = store();
        try (LockClient client = LockClient.builder(store)
                        .listener(metrics)
                        .localQueueLimit(2)
                        .build();
                LockClient other = LockClient.connect(store)) {
            metrics.bindActiveLeases(client);
            DistributedLock lock = client.lock("job:a");
            try (Lease lease = lock.acquire(Duration.ofSeconds(5))) {
                Thread.sleep(20);
            }
            // contention: another client holds the lock, two of ours wait, a third is rejected
            Lease foreign = other.lock("job:a").acquire();
            CompletableFuture<Lease> first = lock.acquireAsync(Duration.ofSeconds(30));
            CompletableFuture<Lease> second = lock.acquireAsync(Duration.ofSeconds(30));
            assertThatThrownBy(() -> lock.acquire(Duration.ofSeconds(30))).isInstanceOf(LockRejectedException.class);
            whileQueued.run();
            foreign.close();
            first.get().close();
            second.get().close();
            // timeout
            try (Lease held = other.lock("job:a").acquire()) {
                assertThatThrownBy(() -> lock.acquire(Duration.ofMillis(30))).isInstanceOf(LockTimeoutException.class);
            }
            // revoked: the store drops the lease (force release); the holder hears it at its next renewal
            // (a lease long enough that a slow machine renews it before its local deadline)
            try (LockClient shortLeases = LockClient.builder(store)
                    .listener(metrics)
                    .leaseTime(Duration.ofSeconds(2))
                    .build()) {
                Lease revoked = shortLeases.lock("order:1").acquire();
                other.forceRelease("order:1");
                // the lost signal, not isValid(): the watchdog must have declared it lost before close()
                revoked.whenLost().get(30, TimeUnit.SECONDS);
            }
            // deadline: the store cannot be reached until the lease's local deadline passes
            AtomicReference<FreezableBackend> freezable = new AtomicReference<>();
            try (LockClient frozen = LockClient.builder(
                            LockBackendProvider.factoryFor(store).andThen(backend -> {
                                freezable.set(new FreezableBackend(backend));
                                return freezable.get();
                            }))
                    .listener(metrics)
                    .leaseTime(Duration.ofMillis(300))
                    .operationTimeout(Duration.ofMillis(200))
                    .build()) {
                Lease lost = frozen.lock("order:2").acquire();
                freezable.get().freeze();
                lost.whenLost().get(30, TimeUnit.SECONDS);
            }
        }
    }
}
