package dev.dlock.tck;

import static org.assertj.core.api.Assertions.assertThat;

import dev.dlock.DistributedSemaphore;
import dev.dlock.Lease;
import dev.dlock.LockClient;
import java.time.Duration;
import java.util.List;
import java.util.concurrent.atomic.AtomicInteger;
import org.junit.jupiter.api.Test;

/**
 * Semaphores: never more holders than permits, and a crashed holder's permit comes back after its lease. A
 * store without semaphores must refuse them; each case then asserts the refusal.
 */
abstract class SemaphoreCases extends ContractSection {
    SemaphoreCases(LockContractTest contract) {
        super(contract);
    }

    @Test
    void semaphoreNeverExceedsItsPermits() throws Exception {
        if (semaphoresRefused()) {
            return;
        }
        List<LockClient> cs = List.of(client(), client(), client());
        History history = new History();
        AtomicInteger next = new AtomicInteger();
        runThreads(8, () -> {
            DistributedSemaphore s = cs.get(next.getAndIncrement() % 3).semaphore("sem", 3);
            for (int i = 0; i < 8; i++) {
                try (Lease permit = s.acquire(Duration.ofSeconds(60))) {
                    history.record(
                            "sem", permit.fencingToken(), Thread.currentThread().getName(), () -> {
                                try {
                                    Thread.sleep(3);
                                } catch (InterruptedException e) {
                                    Thread.currentThread().interrupt();
                                }
                            });
                }
            }
        });
        assertThat(history.size()).isEqualTo(64);
        history.assertAtMost(3);
    }

    @Test
    void semaphoreAdmitsExactlyItsPermits() {
        if (semaphoresRefused()) {
            return;
        }
        DistributedSemaphore s = client().semaphore("sem-count", 2);
        Lease a = s.tryAcquire().orElseThrow();
        Lease b = client().semaphore("sem-count", 2).tryAcquire().orElseThrow();
        assertThat(client().semaphore("sem-count", 2).tryAcquire()).isEmpty();
        a.close();
        Lease c = s.tryAcquire().orElseThrow();
        assertThat(s.permits()).isEqualTo(2);
        b.close();
        c.close();
    }

    @Test
    void semaphoreGetsACrashedHoldersPermitBackAfterItsLease() throws Exception {
        if (semaphoresRefused()) {
            return;
        }
        LockClient crashed = crashableClient();
        Lease abandoned = crashed.semaphore("sem-crash", 1).acquire(LONG_WAIT);
        Lease next = client().semaphore("sem-crash", 1).acquire(Duration.ofSeconds(30));
        assertThat(next.fencingToken()).isGreaterThan(abandoned.fencingToken());
        next.close();
    }
}
