package dev.dlock.spi;

/**
 * Who may be granted, given what a resource's record holds: the grant rules of {@link LockBackend#acquire}
 * written once, for stores that decide in Java (the in-memory store and the JDBC lease table). Stores that
 * decide elsewhere follow the same rules in their own terms: Redis in its Lua scripts, ZooKeeper and etcd
 * by the order of their sequential entries, where a caller is blocked by the entries ahead of it.
 *
 * <p>The caller passes only live state: holders whose lease has passed and queue entries that were not
 * refreshed in time are left out before asking.
 *
 * <ul>
 *   <li>{@link Mode#EXCLUSIVE} and {@link Mode#WRITE}: nobody holds.
 *   <li>{@link Mode#FAIR}: nobody holds, and the caller is first in the queue or the queue is empty.
 *   <li>{@link Mode#READ}: no writer holds other than the holder the caller downgrades from, and nobody
 *       waits (a queued writer keeps new readers out, so writers are not starved), unless it is a
 *       downgrade.
 *   <li>{@link Mode#PERMIT}: fewer holders than {@link AcquireRequest#permits()}.
 * </ul>
 */
public final class GrantRules {
    private GrantRules() {}

    /**
     * Whether a request may be granted now.
     *
     * @param request the request
     * @param holders how many callers hold the resource now
     * @param writer the owner holding it in {@link Mode#WRITE}, or {@code null} when no writer holds
     * @param firstWaiting the owner of the oldest queue entry, or {@code null} when nobody waits
     * @return {@code true} when the store should grant the request
     */
    public static boolean mayGrant(AcquireRequest request, int holders, String writer, String firstWaiting) {
        return switch (request.key().mode()) {
            case EXCLUSIVE, WRITE -> holders == 0;
            case FAIR -> holders == 0 && (firstWaiting == null || firstWaiting.equals(request.owner()));
            case READ ->
                (writer == null || writer.equals(request.downgradeFrom()))
                        && (firstWaiting == null || request.downgradeFrom() != null);
            case PERMIT -> holders < request.permits();
        };
    }
}
