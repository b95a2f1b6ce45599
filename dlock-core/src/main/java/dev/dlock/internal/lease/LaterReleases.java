package dev.dlock.internal.lease;

import dev.dlock.DistributedLock;
import dev.dlock.internal.store.Store;
import dev.dlock.spi.RenewRequest;
import java.util.List;
import java.util.Map;
import java.util.concurrent.ConcurrentHashMap;
import java.util.concurrent.TimeUnit;

/**
 * The leases of one client closed with a delay ({@link LeaseImpl#closeAfter}, a minimum hold): each stays
 * held, and renewed by the {@link Watchdog}, until its time, and is then released by the usual route
 * ({@link HoldRoute}: passed to a local waiter or given back to the store). One timer per lease on the
 * client's scheduler; no thread waits.
 *
 * <p>Closing the client first ({@link #leaveToExpire}): such a lease is not released, since that would end
 * the minimum hold early. The store is asked to keep it for the time left (a renewal with that lease
 * time, which a store with a time to live applies as its new expiry) and lets it expire then. Stores that
 * hold a lease only while the client's session lives (ZooKeeper, etcd) end it with the session anyway.
 *
 * <p>Concurrency: the planned times are in a concurrent map, from {@link #plan} until the lease's timer
 * ran or the client closed. When one lease is planned twice, the earlier time wins: its timer releases
 * and the later one finds nothing planned.
 */
public final class LaterReleases {
    private static final long MIN_LEASE_MILLIS = DistributedLock.MIN_LEASE_TIME.toMillis();

    private final Store store;
    /** When each planned lease is due, as {@code store.nanoTime()}. */
    private final Map<LeaseImpl, Long> due = new ConcurrentHashMap<>();

    LaterReleases(Store store) {
        this.store = store;
    }

    /** Releases {@code lease} in {@code delayNanos} (more than zero), unless the client closes first. */
    void plan(LeaseImpl lease, long delayNanos) {
        long at = store.nanoTime() + delayNanos;
        due.merge(lease, at, (planned, now) -> planned - now <= 0 ? planned : now);
        if (store.schedule(() -> release(lease), delayNanos) == null) {
            due.remove(lease); // the client has closed: released like any other lease
            lease.releaseAsync();
        }
    }

    private void release(LeaseImpl lease) {
        if (due.remove(lease) != null) {
            lease.releaseAsync();
        }
    }

    /**
     * The client is closing: a lease with a release still to come is handed to the store's expiry instead
     * of being released.
     *
     * @param lease a lease the client still holds
     * @return false if the lease has no release planned (or less than the shortest lease time left), and
     *     the caller releases it as usual
     */
    public boolean leaveToExpire(LeaseImpl lease) {
        Long at = due.remove(lease);
        if (at == null) {
            return false;
        }
        long leftMillis = TimeUnit.NANOSECONDS.toMillis(at - store.nanoTime()) + 1;
        if (leftMillis < MIN_LEASE_MILLIS) {
            return false;
        }
        if (lease.stopHolding()) {
            RenewRequest keep = new RenewRequest(lease.key(), lease.owner(), leftMillis);
            store.renew(
                    List.of(keep),
                    lease.name(),
                    (lostOwners, error) -> lease.releaseAnswered(error != null || !lostOwners.contains(lease.owner())));
        }
        return true;
    }
}
