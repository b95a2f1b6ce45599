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
 */
public record LockInfo(String name, LockKind kind, List<Holder> holders, int waiters) {
    /**
     * Copies the holder list.
     *
     * @param name as described on the record
     * @param kind as described on the record
     * @param holders as described on the record
     * @param waiters as described on the record
     */
    public LockInfo {
        Objects.requireNonNull(name, "name");
        Objects.requireNonNull(kind, "kind");
        holders = List.copyOf(holders);
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
