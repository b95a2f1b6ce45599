package dev.dlock;

/**
 * A pair of locks on one name: any number of readers, or one writer.
 *
 * <p>Rules: readers share; a writer excludes readers and writers; a writer that is waiting holds new
 * readers back, so writers are not starved. A thread holding the write lock may take the read lock
 * (downgrade) and then release the write lock. A thread holding only the read lock that asks for the
 * write lock gets {@link IllegalMonitorStateException} at once instead of a deadlock.
 */
public interface DistributedReadWriteLock {
    /**
     * The lock name.
     *
     * @return the name
     */
    String name();

    /**
     * The shared side.
     *
     * @return the read lock
     */
    DistributedLock readLock();

    /**
     * The exclusive side.
     *
     * @return the write lock
     */
    DistributedLock writeLock();
}
