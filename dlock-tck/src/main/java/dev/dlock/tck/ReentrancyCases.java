package dev.dlock.tck;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;

import dev.dlock.DistributedLock;
import dev.dlock.Lease;
import dev.dlock.LeaseLostException;
import dev.dlock.LockClient;
import java.time.Duration;
import java.util.Optional;
import java.util.concurrent.atomic.AtomicReference;
import org.junit.jupiter.api.Test;

/**
 * The {@code Lock} view: reentrant holds counted per thread and shared by views of one name, ownership
 * checks on unlock, and re-entry into a hold that is gone (released, closed, past its deadline, its thread
 * ended).
 */
abstract class ReentrancyCases extends ContractSection {
    ReentrancyCases(LockContractTest contract) {
        super(contract);
    }

    @Test
    void lockIsReentrantAndCountsHolds() {
        LockClient a = client();
        DistributedLock lock = a.lock("reentrant");
        lock.lock();
        lock.lock();
        assertThat(lock.isHeldByCurrentThread()).isTrue();
        lock.unlock();
        assertThat(lock.isHeldByCurrentThread()).isTrue();
        assertThat(client().lock("reentrant").tryAcquire())
                .as("still held after one unlock")
                .isEmpty();
        lock.unlock();
        assertThat(lock.isHeldByCurrentThread()).isFalse();
        Optional<Lease> other = client().lock("reentrant").tryAcquire();
        assertThat(other).as("free after the last unlock").isPresent();
        other.get().close();
    }

    @Test
    void reentrantAcquisitionKeepsTheHoldersToken() {
        DistributedLock lock = client().lock("reentrant-token");
        lock.lock();
        long token = lock.currentLease().orElseThrow().fencingToken();
        lock.lock();
        assertThat(lock.currentLease().orElseThrow().fencingToken()).isEqualTo(token);
        client().lock("reentrant-token"); // another view of the same name shares the hold
        assertThat(client().lock("other-name").isHeldByCurrentThread()).isFalse();
        lock.unlock();
        lock.unlock();
    }

    @Test
    void viewsOfOneNameInOneClientShareTheThreadHold() {
        LockClient a = client();
        a.lock("views").lock();
        DistributedLock second = a.lock("views");
        assertThat(second.isHeldByCurrentThread()).isTrue();
        assertThat(second.tryLock()).as("reentrant through another view").isTrue();
        second.unlock();
        second.unlock();
        assertThat(a.lock("views").isHeldByCurrentThread()).isFalse();
    }

    @Test
    void unlockByAThreadThatDoesNotHoldItThrows() throws Exception {
        DistributedLock lock = client().lock("owned");
        lock.lock();
        AtomicReference<Throwable> error = new AtomicReference<>();
        Thread t = new Thread(() -> {
            try {
                lock.unlock();
            } catch (Throwable e) {
                error.set(e);
            }
        });
        t.start();
        t.join();
        assertThat(error.get()).isInstanceOf(IllegalMonitorStateException.class).hasMessageContaining("owned");
        assertThat(lock.isHeldByCurrentThread()).isTrue();
        lock.unlock();
    }

    @Test
    void unlockWithoutLockThrows() {
        assertThatThrownBy(() -> client().lock("never-locked").unlock())
                .isInstanceOf(IllegalMonitorStateException.class)
                .hasMessageContaining("never-locked");
    }

    @Test
    void newConditionIsUnsupported() {
        assertThatThrownBy(() -> client().lock("cond").newCondition())
                .isInstanceOf(UnsupportedOperationException.class)
                .hasMessageContaining("condition");
    }

    @Test
    void tryLockReturnsFalseWhenHeldElsewhere() {
        try (Lease held = client().lock("trylock").acquire(LONG_WAIT)) {
            DistributedLock lock = client().lock("trylock");
            assertThat(lock.tryLock()).isFalse();
            assertThat(lock.isHeldByCurrentThread()).isFalse();
            assertThat(held.isValid()).isTrue();
        }
    }

    @Test
    void reentryIntoALeaseReleasedThroughCurrentLeaseThrowsAndUnlockSaysSo() {
        DistributedLock lock = client().lock("gone-reentry");
        lock.lock();
        lock.currentLease().orElseThrow().close();
        assertThatThrownBy(lock::lock).isInstanceOf(LeaseLostException.class);
        assertThatThrownBy(lock::unlock).isInstanceOf(LeaseLostException.class);
        assertThat(lock.isHeldByCurrentThread()).isFalse();
        assertThat(client().lock("gone-reentry").tryAcquire()).isPresent();
    }

    @Test
    void reentryAfterTheClientClosedThrows() {
        LockClient a = client();
        DistributedLock lock = a.lock("closed-reentry");
        lock.lock();
        a.close();
        assertThatThrownBy(lock::lock).isInstanceOf(LeaseLostException.class);
        assertThatThrownBy(lock::unlock).isInstanceOf(LeaseLostException.class);
    }

    @Test
    void reentryPastTheLocalDeadlineThrowsEvenBeforeTheWatchdogLooks() throws Exception {
        DistributedLock lock =
                client(b -> b.leaseTime(shortLease()).renewal(false)).lock("late-reentry");
        lock.lock();
        Lease lease = lock.currentLease().orElseThrow();
        awaitTrue(shortLease().multipliedBy(2), () -> lease.remaining().isZero());
        assertThatThrownBy(lock::lock).isInstanceOf(LeaseLostException.class);
        assertThatThrownBy(lock::unlock).isInstanceOf(LeaseLostException.class);
        assertThat(lease.isValid()).isFalse();
    }

    @Test
    void aThreadThatEndsHoldingTheLockViewLosesItAndTheLockIsFreed() throws Exception {
        LockClient a = client(b -> b.leaseTime(shortLease()));
        AtomicReference<Lease> held = new AtomicReference<>();
        Thread t = new Thread(() -> {
            DistributedLock lock = a.lock("dead-thread");
            lock.lock();
            held.set(lock.currentLease().orElseThrow());
            // ends without unlock()
        });
        t.start();
        t.join();
        Lease lease = held.get();
        Lease next = client().lock("dead-thread").acquire(shortLease().multipliedBy(3));
        assertThat(next.fencingToken()).isGreaterThan(lease.fencingToken());
        assertThat(lease.isValid()).isFalse();
        assertThat(lease.whenLost()).succeedsWithin(Duration.ofSeconds(5));
        assertThat(a.heldLeases()).isEmpty();
        next.close();
    }
}
