package dev.dlock.internal.view;

import dev.dlock.DistributedLock;
import dev.dlock.DistributedReadWriteLock;
import dev.dlock.DistributedSemaphore;
import dev.dlock.internal.lease.Terms;
import dev.dlock.internal.wait.Acquisitions;
import dev.dlock.spi.LockKey;
import java.time.Duration;
import java.util.List;

/**
 * Makes the lock views of one client: the top of the engine below the client's assembly. A view gets
 * the parts it uses ({@link ViewParts}), never the engine itself.
 */
public final class Views {
    private final ViewParts parts;

    /**
     * The views of one client.
     *
     * @param acquisitions starts every wait
     * @param holds the client's thread-owned holds (the watchdog forgets those of ended threads)
     * @param waitTime the wait of {@code acquire()}
     */
    public Views(Acquisitions acquisitions, Holds holds, Duration waitTime) {
        this.parts = new ViewParts(acquisitions, holds, waitTime);
    }

    /**
     * An exclusive, fair, read or write lock.
     *
     * @param terms the key and the lease terms
     * @return the view
     */
    public DistributedLock lock(Terms terms) {
        return new LockHandle(parts, terms);
    }

    /**
     * The pair of views of a read-write lock.
     *
     * @param read the read lock's terms
     * @param write the write lock's terms
     * @return the pair
     */
    public DistributedReadWriteLock readWriteLock(Terms read, Terms write) {
        return new ReadWriteHandle(new LockHandle(parts, read), new LockHandle(parts, write));
    }

    /**
     * A semaphore.
     *
     * @param terms the key, the lease terms and the permits
     * @return the view
     */
    public DistributedSemaphore semaphore(Terms terms) {
        return new SemaphoreHandle(parts, terms);
    }

    /**
     * A multi-lock.
     *
     * @param keys exclusive keys, distinct and sorted by name
     * @param leaseMillis the lease time of every part
     * @param renew whether the parts are renewed
     * @return the view
     */
    public DistributedLock multiLock(List<LockKey> keys, long leaseMillis, boolean renew) {
        return new MultiLockHandle(parts, keys, leaseMillis, renew);
    }
}
