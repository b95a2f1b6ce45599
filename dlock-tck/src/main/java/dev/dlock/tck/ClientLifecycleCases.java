package dev.dlock.tck;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;

import dev.dlock.Lease;
import dev.dlock.LockClient;
import dev.dlock.LockException;
import java.time.Duration;
import java.util.List;
import java.util.Optional;
import java.util.Set;
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
        Set<Thread> threadsBefore = Set.copyOf(Thread.getAllStackTraces().keySet());
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
        // A thread leaked per client shows up once per client (three here). One more than before is allowed:
        // a JVM-wide thread a library starts lazily and keeps (the JDK's CompletableFuture delay scheduler, a
        // driver's cleaner) may first appear here. In 1 of 3 CI dry runs, on PostgreSQL, one thread outlived
        // the 10 s (not named then): most likely pgjdbc's "PostgreSQL-JDBC-Cleaner" (its LazyCleaner starts
        // on the first connection needing cleanup and lives 30 s after the last, by default; found by reading
        // the driver 42.7). The message names the new threads now.
        // Threads named dlock-* must end too, but may take a moment after close() returned: HikariCP 6 names
        // its housekeeper after the pool ("dlock-jdbc-pool-N:housekeeper") and stops it with shutdownNow()
        // without waiting for it (HikariPool.destroyHouseKeepingExecutorService). A CI dry run on PostgreSQL
        // saw one dlock thread right after the clients closed (its name was not printed then).
        long deadline = System.nanoTime() + TimeUnit.SECONDS.toNanos(10);
        while ((nonPoolThreads() > before + 1 || !dlockThreads().isEmpty()) && System.nanoTime() - deadline < 0) {
            Thread.sleep(10);
        }
        assertThat(nonPoolThreads())
                .as(
                        "threads after closing the clients; new ones: %s",
                        Thread.getAllStackTraces().keySet().stream()
                                .filter(t -> t.isAlive() && !threadsBefore.contains(t))
                                .map(Thread::getName)
                                .toList())
                .isLessThanOrEqualTo(before + 1);
        assertThat(dlockThreads()).as("dlock threads alive 10 s after close").isEmpty();
    }

    private static List<String> dlockThreads() {
        return Thread.getAllStackTraces().keySet().stream()
                .filter(t -> t.isAlive() && t.getName().startsWith("dlock-"))
                .map(Thread::getName)
                .toList();
    }

    private static int nonPoolThreads() {
        return (int) Thread.getAllStackTraces().keySet().stream()
                .filter(Thread::isAlive)
                .filter(t -> !t.getName().startsWith("ForkJoinPool"))
                .count();
    }
}
