package dev.dlock.tck;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;

import dev.dlock.DistributedLock;
import dev.dlock.Lease;
import dev.dlock.LockClient;
import java.time.Duration;
import org.junit.jupiter.api.Test;

/**
 * A minimum hold ({@code Lease.closeAfter}): the lease stays held and renewed past its lease time until
 * the delay is up and is released then, with no caller waiting; a client that closes first leaves the hold
 * to the store's expiry where the store keeps holds without the client. The thread-owned view's {@code
 * unlockAfter} does the same when its outermost hold ends.
 */
abstract class MinimumHoldCases extends ContractSection {
    MinimumHoldCases(LockContractTest contract) {
        super(contract);
    }

    /** A lease of {@code name} on a client of its own, closed with a delay of two short leases. */
    private record ClosedLater(LockClient holder, Lease lease, Duration delay, long startNanos) {}

    private ClosedLater closedLater(String name) {
        LockClient holder = client(b -> b.leaseTime(shortLease()));
        Lease lease = holder.lock(name).acquire(LONG_WAIT);
        Duration delay = shortLease().multipliedBy(2);
        long start = System.nanoTime();
        lease.closeAfter(delay);
        return new ClosedLater(holder, lease, delay, start);
    }

    @Test
    void closeAfterKeepsTheLockRenewedUntilTheDelayIsUpThenReleasesIt() throws Exception {
        LockClient other = client();
        ClosedLater later = closedLater("min-hold");
        Lease lease = later.lease();
        assertThat(lease.isValid()).as("held until the delay is up").isTrue();
        sleep(shortLease().multipliedBy(3).dividedBy(2));
        assertThat(other.lock("min-hold").tryAcquire())
                .as("still held past its lease time: renewed")
                .isEmpty();
        try (Lease next = other.lock("min-hold").acquire(LONG_WAIT)) {
            assertThat(millisSince(later.startNanos()))
                    .as("released once the delay was up")
                    .isGreaterThanOrEqualTo(later.delay().toMillis());
            assertThat(next.fencingToken()).isGreaterThan(lease.fencingToken());
        }
        assertThat(lease.isValid()).isFalse();
        awaitTrue(Duration.ofSeconds(5), () -> lease.whenLost().isCancelled()); // a clean end, not a loss
    }

    @Test
    void aClientClosedBeforeTheDelayIsUpLeavesTheHoldToTheStore() throws Exception {
        LockClient other = client();
        ClosedLater later = closedLater("min-hold-close");
        later.holder().close();
        if (holdsOutliveTheirClient()) {
            assertThat(other.lock("min-hold-close").tryAcquire())
                    .as("not released by the client's close")
                    .isEmpty();
            try (Lease next = other.lock("min-hold-close").acquire(LONG_WAIT)) {
                assertThat(millisSince(later.startNanos()))
                        .as("the store kept it for the time left")
                        .isGreaterThanOrEqualTo(later.delay().toMillis());
            }
        } else {
            try (Lease next = other.lock("min-hold-close").acquire(LONG_WAIT)) {
                assertThat(next.fencingToken())
                        .as("ended with the session")
                        .isGreaterThan(later.lease().fencingToken());
            }
        }
    }

    @Test
    void unlockAfterLetsTheThreadGoAndKeepsTheLockUntilThen() throws Exception {
        DistributedLock lock = client().lock("min-hold-view");
        lock.lock();
        lock.lock();
        lock.unlockAfter(Duration.ofMinutes(5)); // a nested hold only counts down
        assertThat(lock.isHeldByCurrentThread()).isTrue();
        assertThatThrownBy(() -> lock.unlockAfter(Duration.ofMillis(-1)))
                .isInstanceOf(IllegalArgumentException.class)
                .hasMessageContaining("delay must not be negative");
        assertThat(lock.isHeldByCurrentThread())
                .as("a refused call leaves the hold")
                .isTrue();
        Duration delay = shortLease();
        long start = System.nanoTime();
        lock.unlockAfter(delay);
        assertThat(lock.isHeldByCurrentThread()).isFalse();
        assertThat(lock.tryLock())
                .as("held for its minimum, for this thread too")
                .isFalse();
        try (Lease next = client().lock("min-hold-view").acquire(LONG_WAIT)) {
            assertThat(millisSince(start)).as("the outermost delay counts").isGreaterThanOrEqualTo(delay.toMillis());
        }
    }

    @Test
    void closeAfterOnAMultiLockKeepsEveryName() throws Exception {
        Lease both = client().multiLock("min-hold-a", "min-hold-b").acquire(LONG_WAIT);
        Duration delay = shortLease().dividedBy(2);
        long start = System.nanoTime();
        both.closeAfter(delay);
        assertThat(client().lock("min-hold-b").tryAcquire()).isEmpty();
        try (Lease next = client().multiLock("min-hold-a", "min-hold-b").acquire(LONG_WAIT)) {
            assertThat(millisSince(start)).isGreaterThanOrEqualTo(delay.toMillis());
        }
        awaitTrue(Duration.ofSeconds(5), () -> both.whenLost().isCancelled()); // a clean end, not a loss
    }

    @Test
    void closeAfterWithoutDelayReleasesAtOnceAndRefusesBadDelays() {
        LockClient c = client();
        Lease lease = c.lock("min-hold-now").acquire(LONG_WAIT);
        assertThatThrownBy(() -> lease.closeAfter(Duration.ofMillis(-1)))
                .isInstanceOf(IllegalArgumentException.class)
                .hasMessageContaining("delay must not be negative");
        assertThatThrownBy(() -> lease.closeAfter(null))
                .isInstanceOf(IllegalArgumentException.class)
                .hasMessageContaining("delay must not be null");
        assertThatThrownBy(() -> lease.closeAfter(Duration.ofDays(366)))
                .isInstanceOf(IllegalArgumentException.class)
                .hasMessageContaining("at most 365 days");
        assertThat(lease.isValid()).as("a refused call leaves the lease held").isTrue();
        lease.closeAfter(Duration.ZERO);
        assertThat(lease.isValid()).isFalse();
        try (Lease next = client().lock("min-hold-now").tryAcquire().orElseThrow()) {
            assertThat(next.fencingToken()).isGreaterThan(lease.fencingToken());
        }
    }
}
