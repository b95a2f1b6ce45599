package dev.dlock.internal;

import dev.dlock.Lease;
import dev.dlock.spi.RenewRequest;
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
 * <p>Concurrency: the lease set is concurrent; the next tick is (re)scheduled under a lock that is never
 * held across a store call.
 */
final class Watchdog {
    private static final long MIN_RETRY_NANOS = TimeUnit.MILLISECONDS.toNanos(50);

    private final Engine engine;
    private final Set<LeaseImpl> leases = ConcurrentHashMap.newKeySet();
    private final ReentrantLock lock = new ReentrantLock();
    private ScheduledFuture<?> next;
    private long nextAtNanos = Long.MAX_VALUE;

    Watchdog(Engine engine) {
        this.engine = engine;
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

    void rescheduleFor(LeaseImpl lease) {
        scheduleBy(nextCheck(lease));
    }

    private static long nextCheck(LeaseImpl lease) {
        return lease.renew && !lease.renewing
                ? Math.min(lease.nextRenewNanos, lease.deadlineNanos())
                : lease.deadlineNanos();
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
            next = engine.schedule(this::tick, atNanos - System.nanoTime());
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
        List<LeaseImpl> batch = new ArrayList<>();
        boolean anyDue = false;
        for (LeaseImpl lease : leases) {
            Thread holder = lease.ownerThread();
            if (holder != null && !holder.isAlive()) {
                lease.abandonByDeadThread();
                engine.holds.forget(holder);
                continue;
            }
            if (now - lease.deadlineNanos() >= 0) {
                lease.markLost(
                        "no renewal succeeded before its local deadline (lease time " + lease.leaseMillis() + "ms)");
                continue;
            }
            if (!lease.renew || lease.renewing) {
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
        engine.call("renew " + batch.size() + " leases", () -> engine.backend.renew(requests))
                .whenComplete((lostOwners, error) -> {
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
                        engine.events.fire(l -> l.renewed(batch.size(), lostCount));
                    }
                });
    }
}
