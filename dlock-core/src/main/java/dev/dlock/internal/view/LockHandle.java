package dev.dlock.internal.view;

import dev.dlock.DistributedLock;
import dev.dlock.internal.base.Checks;
import dev.dlock.internal.lease.LeaseImpl;
import dev.dlock.internal.lease.Terms;
import dev.dlock.internal.wait.Acquisition;
import dev.dlock.spi.LockKey;
import dev.dlock.spi.Mode;
import java.time.Duration;

/**
 * A view of an exclusive, fair, read or write lock. Stateless apart from its options: thread-owned holds
 * live in the client's {@link Holds}, so every view of one name shares them.
 *
 * <p>Read-write rules enforced here, where the thread is known: a thread holding the write lock may take
 * the read lock (its write owner goes to the store as {@code downgradeFrom}); a thread holding only the
 * read lock that asks for the write lock fails at once instead of deadlocking.
 */
final class LockHandle extends ThreadOwnedLock {
    private final Terms terms;
    private final LockKey key;

    LockHandle(ViewParts parts, Terms terms) {
        super(parts);
        this.terms = terms;
        this.key = terms.key();
    }

    @Override
    public String name() {
        return key.name();
    }

    @Override
    Pending begin(Duration wait, boolean lockView) {
        String downgradeFrom = null;
        if (lockView && key.mode() == Mode.WRITE && parts.holds().current(key.withMode(Mode.READ)) != null) {
            throw new IllegalMonitorStateException("lock '" + key.name()
                    + "': this thread holds the read lock; upgrading to the write lock is not supported"
                    + " (two upgrading readers would deadlock). Release the read lock first.");
        }
        if (lockView && key.mode() == Mode.READ) {
            Holds.Hold write = parts.holds().current(key.withMode(Mode.WRITE));
            if (write != null) {
                LeaseImpl writeLease = (LeaseImpl) write.lease;
                writeLease.markDowngraded();
                downgradeFrom = writeLease.owner();
            }
        }
        Acquisition a = parts.acquisitions().start(terms, wait, downgradeFrom);
        return new Pending(a.result(), a::cancel);
    }

    @Override
    Object holdResource() {
        return key;
    }

    @Override
    String describe() {
        return (key.mode() == Mode.EXCLUSIVE ? "lock" : key.mode().name().toLowerCase() + " lock") + " '" + key.name()
                + "'";
    }

    @Override
    public DistributedLock withLeaseTime(Duration leaseTime) {
        return new LockHandle(parts, new Terms(key, Checks.leaseMillis(leaseTime), terms.renew(), 1));
    }

    @Override
    public DistributedLock withRenewal(boolean renew) {
        return new LockHandle(parts, new Terms(key, terms.leaseMillis(), renew, 1));
    }
}
