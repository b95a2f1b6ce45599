package dev.dlock.spring;

/** Which kind of lock a {@link WithLock} method takes. */
public enum LockMode {
    /** One holder at a time, waiters served in no particular order ({@code LockClient.lock}). */
    EXCLUSIVE,
    /** One holder at a time, waiters served first come, first served ({@code LockClient.fairLock}). */
    FAIR,
    /** The shared side of a read-write lock: many readers at once, no writer. */
    READ,
    /** The exclusive side of a read-write lock: no readers, no other writer. */
    WRITE
}
