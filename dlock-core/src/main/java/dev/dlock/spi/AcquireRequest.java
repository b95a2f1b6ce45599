package dev.dlock.spi;

import java.util.Objects;

/**
 * One attempt to take a resource, sent by the engine to {@link LockBackend#acquire}.
 *
 * <p>An attempt never blocks in the store: it either grants at once or reports the resource busy. The
 * engine does the waiting. When {@link #queueMillis()} is positive the caller intends to wait, and for
 * {@link Mode#FAIR} and {@link Mode#WRITE} the backend records (or refreshes) the caller's place in the
 * queue with that time to live, so that a waiter that dies is forgotten after it. The engine repeats a
 * waiting attempt well before that time runs out.
 *
 * @param key the resource and the caller's mode
 * @param owner a random, unique id of this acquisition (not of a thread or a client); the holder
 *     record in the store is keyed by it. At most 128 characters of {@code [A-Za-z0-9@._:#-]}.
 * @param leaseMillis how long the store keeps the grant without renewal, by the store's clock
 * @param permits for {@link Mode#PERMIT}: how many holders the semaphore admits; otherwise 1
 * @param queueMillis 0 for a try without waiting; else the time to live of the caller's queue entry
 * @param downgradeFrom for {@link Mode#READ}: the owner of a write hold taken by the same thread, which
 *     must not block this read (write-to-read downgrade); otherwise null
 */
public record AcquireRequest(
        LockKey key, String owner, long leaseMillis, int permits, long queueMillis, String downgradeFrom) {
    /**
     * Checks the invariants the engine guarantees.
     *
     * @param key as described on the record
     * @param owner as described on the record
     * @param leaseMillis as described on the record
     * @param permits as described on the record
     * @param queueMillis as described on the record
     * @param downgradeFrom as described on the record
     */
    public AcquireRequest {
        Objects.requireNonNull(key, "key");
        Objects.requireNonNull(owner, "owner");
        if (leaseMillis <= 0 || permits <= 0 || queueMillis < 0) {
            throw new IllegalArgumentException("leaseMillis and permits must be positive, queueMillis >= 0");
        }
    }

    /**
     * Whether the caller will wait if the resource is busy.
     *
     * @return {@code queueMillis() > 0}
     */
    public boolean waiting() {
        return queueMillis > 0;
    }
}
