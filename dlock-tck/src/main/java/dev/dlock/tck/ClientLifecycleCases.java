package dev.dlock.tck;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;

import dev.dlock.Lease;
import dev.dlock.LockClient;
import dev.dlock.LockException;
import java.time.Duration;
import java.util.List;
import java.util.Optional;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.ExecutionException;
import java.util.concurrent.TimeUnit;
import org.junit.jupiter.api.Test;

/**
 * Closing a client: every lease released, pending waits failed, later use refused, no thread left behind.
 */
abstract class ClientLifecycleCases extends ContractSection {
    ClientLifecycleCases(LockContractTest contract) {
        super(contract);
    }

    @Test
    void closeReleasesEveryLease() {
        LockClient a = client();
        a.lock("close-1").acquire(LONG_WAIT);
        a.lock("close-2").lock();
        if (offersSemaphores()) {
            a.semaphore("close-3", 1).acquire(LONG_WAIT);
        } else {
            a.readWriteLock("close-3").writeLock().acquire(LONG_WAIT);
        }
        assertThat(a.heldLeases()).hasSize(3);
        a.close();
        LockClient b = client();
        for (String n : List.of("close-1", "close-2")) {
            Optional<Lease> lease = b.lock(n).tryAcquire();
            assertThat(lease).as("'%s' released by close()", n).isPresent();
            lease.get().close();
        }
        assertThat(
                        offersSemaphores()
                                ? b.semaphore("close-3", 1).tryAcquire()
                                : b.readWriteLock("close-3").writeLock().tryAcquire())
                .isPresent();
    }

    @Test
    void closeFailsPendingWaits() throws Exception {
        Lease held = client().lock("close-wait").acquire(LONG_WAIT);
        LockClient waiter = client();
        CompletableFuture<Lease> waiting = waiter.lock("close-wait").acquireAsync(LONG_WAIT);
        Thread.sleep(200);
        waiter.close();
        assertThatThrownBy(() -> waiting.get(10, TimeUnit.SECONDS))
                .isInstanceOf(ExecutionException.class)
                .hasCauseInstanceOf(LockException.class);
        held.close();
    }

    @Test
    void useAfterCloseThrows() {
        LockClient a = client();
        a.close();
        assertThatThrownBy(() -> a.lock("closed").tryAcquire())
                .isInstanceOf(LockException.class)
                .hasMessageContaining("closed");
    }

    @Test
    void closeLeavesNoThreadsBehind() throws Exception {
        // Warm up shared, JVM-wide threads (common pool, client library event loops started lazily).
        LockClient warm = client();
        warm.lock("threads").acquire(LONG_WAIT).close();
        warm.close();
        Thread.sleep(500);
        int before = nonPoolThreads();
        for (int i = 0; i < 3; i++) {
            LockClient c = client(b -> b.leaseTime(shortLease()));
            Lease l = c.lock("threads").acquire(LONG_WAIT);
            CompletableFuture<Lease> w = c.lock("threads").acquireAsync(Duration.ofSeconds(5));
            Thread.sleep(100);
            l.close();
            w.get(10, TimeUnit.SECONDS).close();
            c.close();
        }
        awaitTrue(Duration.ofSeconds(10), () -> nonPoolThreads() <= before);
        assertThat(Thread.getAllStackTraces().keySet().stream()
                        .filter(t -> t.getName().startsWith("dlock-"))
                        .count())
                .isZero();
    }

    private static int nonPoolThreads() {
        return (int) Thread.getAllStackTraces().keySet().stream()
                .filter(Thread::isAlive)
                .filter(t -> !t.getName().startsWith("ForkJoinPool"))
                .count();
    }
}
