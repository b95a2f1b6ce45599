package dev.dlock.integration;

import java.time.Duration;
import java.util.Objects;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.locks.Condition;
import org.springframework.integration.support.locks.DistributedLock;

/**
 * The lock {@link DlockLockRegistry#obtain} returns: Spring Integration's {@link DistributedLock} over a
 * dlock lock's thread-owned {@link java.util.concurrent.locks.Lock} view.
 *
 * <p>Design: a stateless adapter. Ownership, reentrancy, the lease and its renewal are the dlock lock's
 * (the engine's), so every instance of the same key in one client shares one hold per thread, as the
 * registry's callers expect. A time-to-live picks the lease time of the grant through a view of the same
 * lock; a thread that already holds the lock re-enters its hold, whose lease time stays as it was.
 */
final class RegistryLock implements DistributedLock {
    private final dev.dlock.DistributedLock lock;

    RegistryLock(dev.dlock.DistributedLock lock) {
        this.lock = lock;
    }

    @Override
    public void lock() {
        lock.lock();
    }

    @Override
    public void lock(Duration ttl) {
        lock.withLeaseTime(Objects.requireNonNull(ttl, "ttl")).lock();
    }

    @Override
    public void lockInterruptibly() throws InterruptedException {
        lock.lockInterruptibly();
    }

    @Override
    public boolean tryLock() {
        return lock.tryLock();
    }

    @Override
    public boolean tryLock(long time, TimeUnit unit) throws InterruptedException {
        return lock.tryLock(time, Objects.requireNonNull(unit, "unit"));
    }

    @Override
    public boolean tryLock(Duration waitTime, Duration ttl) throws InterruptedException {
        Objects.requireNonNull(waitTime, "waitTime");
        return lock.withLeaseTime(Objects.requireNonNull(ttl, "ttl"))
                .tryLock(saturatedNanos(waitTime), TimeUnit.NANOSECONDS);
    }

    private static long saturatedNanos(Duration d) {
        try {
            return d.toNanos();
        } catch (ArithmeticException tooLong) {
            return d.isNegative() ? Long.MIN_VALUE : Long.MAX_VALUE;
        }
    }

    @Override
    public void unlock() {
        lock.unlock();
    }

    @Override
    public Condition newCondition() {
        return lock.newCondition();
    }

    @Override
    public String toString() {
        return "RegistryLock[" + lock.name() + "]";
    }
}
