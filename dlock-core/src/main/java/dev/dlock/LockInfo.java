package dev.dlock;

import java.time.Duration;
import java.util.List;
import java.util.Objects;

/**
 * What a store can tell about one lock: who holds it, with which fencing token, for how much longer.
 * Returned by {@link LockClient#describe} and {@link LockClient#list}; a snapshot, stale at once.
 *
 * @param name the lock name
 * @param kind which kind of lock it is
 * @param holders current holders, empty when free
 * @param waiters callers queued in the store, or -1 where the store does not keep a queue
 * @param heldBack how long the store would hold a grant of this lock back if asked now, because it may
 *     have lost holds whose leases are still running (a Redis restarted without persistence, a failover);
 *     zero when it would grant, and on stores that never hold grants back
 */
public record LockInfo(String name, LockKind kind, List<Holder> holders, int waiters, Duration heldBack) {
    /**
     * Copies the holder list.
     *
     * @param name as described on the record
     * @param kind as described on the record
     * @param holders as described on the record
     * @param waiters as described on the record
     * @param heldBack as described on the record; zero or positive
     */
    public LockInfo {
        Objects.requireNonNull(name, "name");
        Objects.requireNonNull(kind, "kind");
        Objects.requireNonNull(heldBack, "heldBack");
        if (heldBack.isNegative()) {
            throw new IllegalArgumentException("heldBack must not be negative, got " + heldBack);
        }
        holders = List.copyOf(holders);
    }

    /**
     * A lock whose store does not hold grants back.
     *
     * @param name as described on the record
     * @param kind as described on the record
     * @param holders as described on the record
     * @param waiters as described on the record
     */
    public LockInfo(String name, LockKind kind, List<Holder> holders, int waiters) {
        this(name, kind, holders, waiters, Duration.ZERO);
    }

    /**
     * One holder.
     *
     * @param owner the holder's owner id; its part before {@code #} names the process ({@code pid@host})
     * @param fencingToken the token of the holder's grant
     * @param mode {@code exclusive}, {@code fair}, {@code read}, {@code write} or {@code permit}
     * @param expiresIn time left on the holder's lease by the store's clock, or null when unknown
     */
    public record Holder(String owner, long fencingToken, String mode, Duration expiresIn) {}
}
