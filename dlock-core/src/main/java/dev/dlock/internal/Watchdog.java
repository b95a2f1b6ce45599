package dev.dlock.internal;

import dev.dlock.Lease;
import dev.dlock.spi.BackendContext;
import dev.dlock.spi.RenewRequest;
import dev.dlock.spi.SessionLeases;
import java.util.ArrayList;
import java.util.List;
import java.util.Set;
import java.util.concurrent.ConcurrentHashMap;
import java.util.concurrent.ScheduledFuture;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.locks.ReentrantLock;

/**
 * Renews every lease of one client from its single scheduler thread, and declares leases lost when
 * their local deadline passes.
 *
 * <p>Batching: a tick runs when the earliest lease is due (a third of its lease time after its last
 * confirmed renewal was sent). That tick renews every lease that is at least a sixth of its lease time
 * old, in one {@code LockBackend.renew} call, which a backend turns into one round trip per node. Leases
 * therefore fall into step, and a client holding thousands of leases sends one batch per period.
 *
 * <p>Failure modes: a failed renewal is retried after a tenth of the lease time (at least 50 ms); when the
 * deadline passes first, the lease is lost. A lease the store no longer holds is lost at once. A lease
 * held through the {@code Lock} view by a thread that has ended is lost and released at the next tick:
 * nobody could ever unlock it.
 *
 * <p>Session stores ({@link SessionLeases}, handed over by the backend through the {@link
 * BackendContext.BackendEvents} this watchdog is): the store keeps a hold as long as the session, so this
 * is the one clock for those leases too. A tick also runs when the session's certain life ends; if it has
 * not moved on by then, every lease is lost. A lease lost by its own deadline (renewal switched off, or
 * renewals failing) is released at the store, which would otherwise keep it for the session's life.
 *
 * <p>Concurrency: the lease set is concurrent; the next tick is (re)scheduled under a lock that is never
 * held across a store call. Backend events arrive on store threads and only mark leases lost.
 */
final class Watchdog implements BackendContext.BackendEvents {
    private static final long MIN_RETRY_NANOS = TimeUnit.MILLISECONDS.toNanos(50);

    private final Store store;
    private final ListenerEvents events;
    private final Holds holds;
    private final Set<LeaseImpl> leases = ConcurrentHashMap.newKeySet();
    private final ReentrantLock lock = new ReentrantLock();
    private ScheduledFuture<?> next;
    private long nextAtNanos = Long.MAX_VALUE;
    /** The backend's session when its leases are one (set once, while the backend opens), else null. */
    private volatile SessionLeases session;

    /**
     * A watchdog renewing through the store; forgets the {@code Lock}-view holds of threads that ended.
     */
    Watchdog(Store store, ListenerEvents events, Holds holds) {
        this.store = store;
        this.events = events;
        this.holds = holds;
    }

    void add(LeaseImpl lease) {
        leases.add(lease);
        rescheduleFor(lease);
    }

    void remove(LeaseImpl lease) {
        leases.remove(lease);
    }

    List<Lease> held() {
        List<Lease> held = new ArrayList<>();
        for (LeaseImpl lease : leases) {
            if (lease.isHeld()) {
                held.add(lease);
            }
        }
        return held;
    }

    @Override
    public void allLeasesLost(String reason) {
        for (LeaseImpl lease : leases) {
            lease.markLost(reason);
        }
    }

    @Override
    public void leasesAreSession(SessionLeases session) {
        this.session = session;
    }

    void rescheduleFor(LeaseImpl lease) {
        scheduleBy(nextCheck(lease));
    }

    private long nextCheck(LeaseImpl lease) {
        long at = lease.renew && !lease.isRenewing()
                ? Math.min(lease.nextRenewNanos, lease.deadlineNanos())
                : lease.deadlineNanos();
        SessionLeases s = session;
        if (s != null) {
            long sessionEnd = s.liveUntilNanos();
            if (sessionEnd - at < 0) {
                at = sessionEnd;
            }
        }
        return at;
    }

    private void scheduleBy(long atNanos) {
        lock.lock();
        try {
            if (next != null && atNanos - nextAtNanos >= 0) {
                return;
            }
            if (next != null) {
                next.cancel(false);
            }
            nextAtNanos = atNanos;
            next = store.schedule(this::tick, atNanos - System.nanoTime());
        } finally {
            lock.unlock();
        }
    }

    private void tick() {
        lock.lock();
        try {
            next = null;
            nextAtNanos = Long.MAX_VALUE;
        } finally {
            lock.unlock();
        }
        long now = System.nanoTime();
        SessionLeases s = session;
        boolean sessionOver = s != null && !leases.isEmpty() && now - s.liveUntilNanos() >= 0;
        List<LeaseImpl> batch = new ArrayList<>();
        boolean anyDue = false;
        for (LeaseImpl lease : leases) {
            Thread holder = lease.ownerThread();
            if (holder != null && !holder.isAlive()) {
                lease.abandonByDeadThread();
                holds.forget(holder);
                continue;
            }
            if (now - lease.deadlineNanos() >= 0) {
                if (lease.markLost("no renewal succeeded before its local deadline (lease time " + lease.leaseMillis()
                                + "ms)")
                        && s != null) {
                    releaseExpired(lease);
                }
                continue;
            }
            if (sessionOver) {
                lease.markLost(s.notLiveReason());
                continue;
            }
            if (!lease.renew || lease.isRenewing()) {
                continue;
            }
            long dueIn = lease.nextRenewNanos - now;
            if (dueIn <= 0) {
                anyDue = true;
            }
            if (dueIn <= lease.leaseNanos() / 6) {
                batch.add(lease);
            }
        }
        if (anyDue) {
            renew(batch, now);
        }
        long earliest = Long.MAX_VALUE;
        for (LeaseImpl lease : leases) {
            long at = nextCheck(lease);
            if (earliest == Long.MAX_VALUE || at - earliest < 0) {
                earliest = at;
            }
        }
        if (earliest != Long.MAX_VALUE) {
            scheduleBy(Math.max(earliest, System.nanoTime() + TimeUnit.MILLISECONDS.toNanos(1)));
        }
    }

    /** A session store keeps a hold as long as the session: give back a lease whose own time is over. */
    private void releaseExpired(LeaseImpl lease) {
        store.release(lease.key, lease.owner, " past its lease time");
    }

    private void renew(List<LeaseImpl> due, long sentNanos) {
        List<LeaseImpl> batch = new ArrayList<>(due.size());
        List<RenewRequest> requests = new ArrayList<>(due.size());
        for (LeaseImpl lease : due) {
            if (lease.startRenewal()) { // not while extend() renews it
                batch.add(lease);
                requests.add(new RenewRequest(lease.key, lease.owner, lease.leaseMillis()));
            }
        }
        if (batch.isEmpty()) {
            return;
        }
        store.renew(requests, null).whenComplete((lostOwners, error) -> {
            int lost = 0;
            long now = System.nanoTime();
            for (LeaseImpl lease : batch) {
                if (error != null) {
                    lease.nextRenewNanos = now + Math.max(MIN_RETRY_NANOS, lease.leaseNanos() / 10);
                } else if (lostOwners.contains(lease.owner)) {
                    lost++;
                    lease.markLost("the store no longer held it at renewal");
                } else {
                    lease.renewed(sentNanos);
                }
                lease.endRenewal();
                if (lease.isHeld()) {
                    rescheduleFor(lease);
                }
            }
            int lostCount = lost;
            if (error == null) {
                events.renewed(batch.size(), lostCount);
            }
        });
    }
}
