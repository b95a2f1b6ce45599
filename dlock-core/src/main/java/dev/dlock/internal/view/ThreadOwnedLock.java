package dev.dlock.internal.view;

import dev.dlock.DistributedLock;
import dev.dlock.Lease;
import dev.dlock.LeaseLostException;
import dev.dlock.LockTimeoutException;
import dev.dlock.internal.base.Checks;
import dev.dlock.internal.base.Waits;
import dev.dlock.internal.lease.HeldLease;
import java.time.Duration;
import java.util.Optional;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.locks.Condition;
import java.util.function.Consumer;

/**
 * What every lock view shares: the lease API ({@link LeaseView}) and the thread-owned, reentrant {@code
 * Lock} view on top of the client's {@link Holds}.
 *
 * <p>Concurrency: a hold is touched only by its own thread. A reentrant {@code lock()} costs a map lookup
 * and no store call; only the outermost {@code unlock()} talks to the store.
 */
abstract class ThreadOwnedLock extends LeaseView implements DistributedLock {
    private static final Duration FOREVER = Duration.ofSeconds(Long.MAX_VALUE);

    ThreadOwnedLock(ViewParts parts) {
        super(parts);
    }

    /** The key of this lock in {@link Holds}. */
    abstract Object holdResource();

    /** Describes the lock in messages, e.g. {@code lock 'a'}. */
    abstract String describe();

    @Override
    public Lease acquire() {
        return acquire(parts.waitTime());
    }

    // ---- thread-owned Lock view

    @Override
    public void lock() {
        try {
            lockFor(FOREVER, false);
        } catch (InterruptedException e) {
            throw new AssertionError("an uninterruptible wait was interrupted", e);
        }
    }

    @Override
    public void lockInterruptibly() throws InterruptedException {
        if (Thread.interrupted()) {
            throw new InterruptedException("interrupted before waiting for " + describe());
        }
        lockFor(FOREVER, true);
    }

    @Override
    public boolean tryLock() {
        try {
            lockFor(Duration.ZERO, false);
            return true;
        } catch (LockTimeoutException busy) {
            return false;
        } catch (InterruptedException e) {
            throw new AssertionError("an uninterruptible wait was interrupted", e);
        }
    }

    @Override
    public boolean tryLock(long time, TimeUnit unit) throws InterruptedException {
        if (Thread.interrupted()) {
            throw new InterruptedException("interrupted before waiting for " + describe());
        }
        try {
            lockFor(Duration.ofNanos(Math.max(0, unit.toNanos(time))), true);
            return true;
        } catch (LockTimeoutException busy) {
            return false;
        }
    }

    private void lockFor(Duration wait, boolean interruptible) throws InterruptedException {
        Holds.Hold hold = parts.holds().current(holdResource());
        if (hold != null) {
            // Re-entry into a hold whose lease is gone (lost, released through currentLease(), the client
            // closed, or past its local deadline) would let the caller believe it is still protected.
            if (!hold.lease.isValid()) {
                throw new LeaseLostException(describe() + " is held by this thread but its lease is gone ("
                        + goneReason(hold.lease) + "); unlock() it and lock again");
            }
            hold.count++;
            return;
        }
        Pending p = begin(wait, true);
        // lock() and tryLock() ignore interrupts, like ReentrantLock: the interrupt status stays set.
        HeldLease lease = Waits.await(p.result(), p.cancel(), interruptible);
        lease.ownedBy(Thread.currentThread());
        parts.holds().put(holdResource(), new Holds.Hold(lease));
    }

    private static String goneReason(HeldLease lease) {
        String lost = lease.lostReason();
        if (lost != null) {
            return "lost: " + lost;
        }
        try {
            lease.checkValid();
            return "invalid";
        } catch (LeaseLostException e) {
            return e.getMessage();
        }
    }

    @Override
    public void unlock() {
        unlock(HeldLease::close);
    }

    @Override
    public void unlockAfter(Duration delay) {
        Checks.releaseDelay(delay); // before the hold counts down: a refused call leaves it held
        unlock(lease -> lease.closeAfter(delay));
    }

    /** Counts down this thread's hold; the outermost ends the lease with {@code end}. */
    private void unlock(Consumer<HeldLease> end) {
        Holds.Hold hold = parts.holds().current(holdResource());
        if (hold == null) {
            throw new IllegalMonitorStateException(describe() + " is not held by the current thread ("
                    + Thread.currentThread().getName() + ")");
        }
        // Looked at before the release below, which would make any lease look released.
        boolean gone = !hold.lease.isValid();
        String reason = gone ? goneReason(hold.lease) : null;
        if (--hold.count == 0) {
            parts.holds().remove(holdResource());
            hold.lease.ownedBy(null);
            end.accept(hold.lease);
        }
        String lostReason = hold.lease.lostReason();
        if (gone || lostReason != null) {
            throw new LeaseLostException(
                    describe() + " was lost while this thread held it: " + (lostReason != null ? lostReason : reason));
        }
    }

    @Override
    public boolean isHeldByCurrentThread() {
        return parts.holds().current(holdResource()) != null;
    }

    @Override
    public Optional<Lease> currentLease() {
        Holds.Hold hold = parts.holds().current(holdResource());
        return hold == null ? Optional.empty() : Optional.of(hold.lease);
    }

    @Override
    public Condition newCondition() {
        throw new UnsupportedOperationException(
                "dlock locks have no conditions: a condition would need a distributed wait set");
    }

    @Override
    public String toString() {
        return "DistributedLock[" + describe() + "]";
    }
}
