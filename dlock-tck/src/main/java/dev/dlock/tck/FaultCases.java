package dev.dlock.tck;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;

import dev.dlock.DistributedLock;
import dev.dlock.Lease;
import dev.dlock.LeaseLostException;
import dev.dlock.LockBackendException;
import dev.dlock.LockClient;
import dev.dlock.LockException;
import dev.dlock.LockTimeoutException;
import java.time.Duration;
import java.util.concurrent.TimeUnit;
import org.junit.jupiter.api.Test;

/**
 * Faults: a store that is down (acquire fails within the timeout, held leases are lost within the lease
 * time, the client works again when it returns), a store call that never answers, and a release that
 * fails.
 */
abstract class FaultCases extends ContractSection {
    FaultCases(LockContractTest contract) {
        super(contract);
    }

    @Test
    void storeDownMakesAcquireFailWithinTheTimeout() throws Exception {
        LockClient c = client();
        c.lock("warm").tryAcquire().ifPresent(Lease::close);
        stopStore();
        try {
            long start = System.nanoTime();
            assertThatThrownBy(() -> c.lock("down").acquire(Duration.ofSeconds(30)))
                    .isInstanceOf(LockBackendException.class);
            assertThat(millisSince(start)).isLessThan(operationTimeout().toMillis() + 3_000);
        } finally {
            startStore();
        }
    }

    @Test
    void storeDownMakesHeldLeasesLostWithinTheLeaseTime() throws Exception {
        LockClient c = client(b -> b.leaseTime(shortLease()));
        Lease lease = c.lock("down-held").acquire(LONG_WAIT);
        stopStore();
        try {
            long start = System.nanoTime();
            LeaseLostException signal = lease.whenLost()
                    .get(shortLease().toMillis() + operationTimeout().toMillis() + 10_000, TimeUnit.MILLISECONDS);
            assertThat(signal).hasMessageContaining("down-held");
            assertThat(millisSince(start))
                    .isLessThan(shortLease().toMillis() + operationTimeout().toMillis() + 5_000);
            assertThat(lease.isValid()).isFalse();
        } finally {
            startStore();
        }
    }

    @Test
    void clientWorksAgainAfterTheStoreReturns() throws Exception {
        // A short lease: an attempt made during the outage may still be granted by a store that comes
        // back (e.g. a command a client library sends after reconnecting) with nobody listening; such a
        // grant must expire by its lease time, within the 5 s waits below.
        LockClient c = client(b -> b.leaseTime(shortLease()));
        c.lock("recover").acquire(LONG_WAIT).close();
        stopStore();
        try {
            assertThatThrownBy(() -> c.lock("recover").acquire(Duration.ofSeconds(1)))
                    .isInstanceOf(LockException.class);
        } finally {
            startStore();
        }
        long deadline = System.nanoTime() + TimeUnit.SECONDS.toNanos(30);
        while (true) {
            try (Lease lease = c.lock("recover").acquire(Duration.ofSeconds(5))) {
                assertThat(lease.isValid()).isTrue();
                break;
            } catch (LockBackendException e) {
                assertThat(System.nanoTime() - deadline)
                        .as("client recovered within 30 s: " + e)
                        .isNegative();
                Thread.sleep(200);
            }
        }
    }

    @Test
    void aTimedWaitEndsAtItsDeadlineWhileAStoreCallIsInFlight() throws Exception {
        // An operation timeout well above the 1.5 s bound below, so a wait that lasted until the call timed
        // out fails; not longer, as closing the client waits for the frozen calls to time out.
        LockClient a = client(b -> b.operationTimeout(Duration.ofSeconds(4)));
        wire(a).freeze(); // every call is now on its way for ever (until the operation timeout)
        DistributedLock lock = a.lock("deadline-in-flight");
        long start = System.nanoTime();
        assertThat(lock.tryLock(300, TimeUnit.MILLISECONDS)).isFalse();
        assertThat(millisSince(start)).as("tryLock(300 ms) returned after").isLessThan(1_500);
        start = System.nanoTime();
        assertThatThrownBy(() -> lock.acquire(Duration.ofMillis(300))).isInstanceOf(LockTimeoutException.class);
        assertThat(millisSince(start)).as("acquire(300 ms) failed after").isLessThan(1_500);
    }

    @Test
    void aReleaseThatFailsIsRetriedSoTheLockDoesNotStayTakenUntilTheLeaseEnds() throws Exception {
        LockClient a = client(b -> b.leaseTime(Duration.ofSeconds(60)));
        Lease lease = a.lock("failed-release").acquire(LONG_WAIT);
        wire(a).failNextRelease();
        assertThatThrownBy(lease::close).isInstanceOf(LockBackendException.class);
        Lease next = client().lock("failed-release").acquire(Duration.ofSeconds(10));
        assertThat(next.fencingToken()).isGreaterThan(lease.fencingToken());
        next.close();
    }
}
