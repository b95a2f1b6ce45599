package dev.dlock.internal.view;

import dev.dlock.DistributedLock;
import dev.dlock.DistributedReadWriteLock;

/** The pair of views of one read-write lock; all rules live in {@link LockHandle} and the store. */
record ReadWriteHandle(DistributedLock readLock, DistributedLock writeLock) implements DistributedReadWriteLock {
    @Override
    public String name() {
        return readLock.name();
    }
}
