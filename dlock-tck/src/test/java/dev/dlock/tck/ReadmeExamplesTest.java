package dev.dlock.tck;

import static org.assertj.core.api.Assertions.assertThat;

import dev.dlock.DistributedLock;
import dev.dlock.DistributedReadWriteLock;
import dev.dlock.DistributedSemaphore;
import dev.dlock.LeaderElection;
import dev.dlock.Lease;
import dev.dlock.LockClient;
import java.time.Duration;
import java.util.ArrayList;
import java.util.List;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.TimeUnit;
import org.junit.jupiter.api.Test;

/** The code examples of README.md, compiled and run against the in-memory backend so they stay true. */
class ReadmeExamplesTest {
    private final List<String> ledger = new ArrayList<>();

    private void write(String entry, long fencingToken) {
        ledger.add(entry + "@" + fencingToken);
    }

    @Test
    void quickStart() throws Exception {
        // README: Quick start
        try (LockClient client = LockClient.builder("mem:")
                .namespace("billing")
                .leaseTime(Duration.ofSeconds(30))
                .build()) {
            DistributedLock lock = client.lock("invoice:2026-11");

            // Leases: not bound to a thread; the fencing token guards the shared resource.
            try (Lease lease = lock.acquire(Duration.ofSeconds(10))) {
                write("invoice run", lease.fencingToken());
                lease.checkValid(); // throws LeaseLostException if the lease was lost meanwhile
            }

            // java.util.concurrent.locks.Lock: thread-owned and reentrant.
            lock.lock();
            try {
                write("again", lock.currentLease().orElseThrow().fencingToken());
            } finally {
                lock.unlock();
            }

            // Async: cancelling leaves no holder behind.
            CompletableFuture<Lease> pending = lock.acquireAsync(Duration.ofSeconds(5));
            pending.thenAccept(lease -> {
                        try (lease) {
                            write("async", lease.fencingToken());
                        }
                    })
                    .get(5, TimeUnit.SECONDS);
        }
        assertThat(ledger).hasSize(3);
        assertThat(ledger.get(0)).startsWith("invoice run@");
    }

    @Test
    void otherPrimitives() {
        try (LockClient client = LockClient.connect("mem:")) {
            // README: Primitives
            DistributedReadWriteLock prices = client.readWriteLock("prices");
            try (Lease read = prices.readLock().acquire(Duration.ofSeconds(5))) {
                assertThat(read.isValid()).isTrue();
            }
            DistributedSemaphore exports = client.semaphore("exports", 3);
            try (Lease permit = exports.acquire(Duration.ofSeconds(5))) {
                assertThat(permit.isValid()).isTrue();
            }
            try (Lease both = client.multiLock("account:1", "account:2").acquire(Duration.ofSeconds(5))) {
                assertThat(both.parts()).hasSize(2);
            }
            Lease lease = client.fairLock("nightly-job").acquire(Duration.ofSeconds(5));
            lease.whenLost().thenAccept(lost -> System.err.println("stop now: " + lost.getMessage()));
            lease.closeAfter(Duration.ofMillis(200).minus(lease.heldFor()));
            assertThat(client.fairLock("nightly-job").tryAcquire())
                    .as("held for its minimum")
                    .isEmpty();
            try (Lease next = client.fairLock("nightly-job").acquire(Duration.ofSeconds(5))) {
                assertThat(next.fencingToken()).isGreaterThan(lease.fencingToken());
            }
        }
    }

    @Test
    void leaderElection() {
        try (LockClient client = LockClient.connect("mem:")) {
            // README: Leader election
            try (LeaderElection election = client.election("reports:scheduler")) {
                Lease term = election.awaitLeadership(Duration.ofMinutes(5));
                long batches = 0;
                while (term.isValid() && batches < 3) {
                    batches++; // runOneBatch(term.fencingToken())
                }
                assertThat(batches).isEqualTo(3);
                assertThat(election.isLeader()).isTrue();
            }
        }
    }
}
