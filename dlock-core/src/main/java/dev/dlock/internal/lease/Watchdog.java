package dev.dlock.internal.lease;

import dev.dlock.Lease;
import dev.dlock.internal.base.ListenerEvents;
import dev.dlock.internal.base.Waits;
import dev.dlock.internal.store.Store;
import dev.dlock.spi.BackendContext;
import dev.dlock.spi.RenewRequest;
import dev.dlock.spi.SessionLeases;
import java.util.ArrayList;
import java.util.List;
import java.util.Set;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.ConcurrentHashMap;
import java.util.concurrent.ScheduledFuture;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.locks.ReentrantLock;

/**
 * Renews every lease of one client from its single scheduler thread, and declares leases lost when
 * their local deadline passes: the one clock of the leases. An {@code extend} is a renewal too and runs
 * here ({@link #extend}).
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
 * <p>Store clocks: a store that counts holds on its wall clock (Redis, SQL) reports the clock readings
 * that come with its answers; when one shows the clock jumped forward ({@link StoreClocks}), every hold of
 * this client at that store may end that much early, so every lease's deadline is cut by the jump, and a
 * lease whose cut deadline passed is lost at once. All leases, not only those on the node that jumped: the
 * SPI does not say which lease lives where, a false loss is the holder's safe side, and steps are rare
 * (standalone, Sentinel and SQL have one source, so there it is exact). A confirmation sent before a jump
 * was counted and answered after is cut as well ({@link #owedCut}). Logged as a warning once per jump; the
 * listener hears of the leases lost, with the jump in the reason.
 *
 * <p>Concurrency: the lease set is concurrent; the next tick is (re)scheduled under a lock that is never
 * held across a store call. Backend events arrive on store threads and only cut deadlines and mark leases
 * lost.
 */
public final class Watchdog implements BackendContext.BackendEvents {
    private static final long MIN_RETRY_NANOS = TimeUnit.MILLISECONDS.toNanos(50);
    private static final System.Logger LOG = System.getLogger(Watchdog.class.getName());

    private final Store store;
    private final ListenerEvents events;
    private final Set<LeaseImpl> leases = ConcurrentHashMap.newKeySet();
    private final LaterReleases laterReleases;
    private final StoreClocks clocks = new StoreClocks();
    private final ReentrantLock lock = new ReentrantLock();
    private ScheduledFuture<?> next;
    private long nextAtNanos = Long.MAX_VALUE;
    /** The backend's session when its leases are one (set once, while the backend opens), else null. */
    private volatile SessionLeases session;

    /**
     * A watchdog renewing through the store.
     *
     * @param store renewals go there
     * @param events listener events
     */
    public Watchdog(Store store, ListenerEvents events) {
        this.store = store;
        this.events = events;
        this.laterReleases = new LaterReleases(store);
    }

    /** {@return the leases closed with a delay: renewed here until then} */
    public LaterReleases laterReleases() {
        return laterReleases;
    }

    /**
     * Watches a lease handed to its holder: renews it and declares it lost at its deadline.
     *
     * @param lease the lease
     */
    public void add(LeaseImpl lease) {
        leases.add(lease);
        if (lease.pass() == 0) { // a pass keeps its giver's deadline, which was cut already
            owedCut(lease, lease.confirmedNanos());
        }
        if (lease.isHeld()) {
            rescheduleFor(lease);
        }
    }

    /**
     * Stops watching a lease.
     *
     * @param lease the lease
     */
    public void remove(LeaseImpl lease) {
        leases.remove(lease);
    }

    /**
     * The leases held now.
     *
     * @return a snapshot
     */
    public List<Lease> held() {
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

    @Override
    public void storeClock(String source, long storeMicros, long sentNanos, long answeredNanos) {
        long jump = clocks.reading(source, storeMicros, sentNanos, answeredNanos);
        if (jump <= 0) {
            return;
        }
        String reason =
                "the store's clock (" + source + ") jumped forward by " + TimeUnit.NANOSECONDS.toMillis(jump) + " ms";
        clocks.record(answeredNanos, jump, reason); // first, so that a confirmation answered meanwhile sees it
        int cut = 0;
        int lost = 0;
        for (LeaseImpl lease : leases) {
            cut++;
            if (cut(lease, jump, reason)) {
                lost++;
            }
        }
        LOG.log(
                System.Logger.Level.WARNING,
                "dlock: " + reason + ": the local deadline of each of this client's " + cut
                        + " leases moved that much earlier; leases lost as their deadline passed: " + lost);
    }

    /**
     * Cuts a deadline that a confirmation sent at {@code sentNanos} set, by the store clock jumps counted
     * after it was sent: the store may have served it before the jump.
     *
     * @param lease the lease just confirmed
     * @param sentNanos when the confirming request was sent
     */
    void owedCut(LeaseImpl lease, long sentNanos) {
        long owed = clocks.owedSince(sentNanos);
        if (owed > 0) {
            cut(lease, owed, clocks.lastReason() + " while a renewal or grant of it was on its way");
        }
    }

    /** Moves the lease's deadline {@code nanos} earlier; true if that made it lost. */
    private boolean cut(LeaseImpl lease, long nanos, String reason) {
        lease.cutDeadline(nanos);
        if (lease.beforeDeadline()) {
            if (lease.isHeld()) {
                rescheduleFor(lease);
            }
            return false;
        }
        return lease.markLost(reason + ", past the lease's local deadline");
    }

    /**
     * How long the backend's session is certainly kept from {@code now}: a lease of a session store is
     * valid no longer than that, whatever its own deadline.
     *
     * @param now {@code store.nanoTime()}
     * @return nanoseconds, not positive once the session is not live; {@code Long.MAX_VALUE} for a store
     *     without a session
     */
    long sessionLeftNanos(long now) {
        SessionLeases s = session;
        return s == null ? Long.MAX_VALUE : s.liveUntilNanos() - now;
    }

    void rescheduleFor(LeaseImpl lease) {
        scheduleBy(nextCheck(lease));
    }

    private long nextCheck(LeaseImpl lease) {
        long at = lease.renews() && !lease.renewal().isTaken()
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
            next = store.schedule(this::tick, atNanos - store.nanoTime());
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
        long now = store.nanoTime();
        SessionLeases s = session;
        boolean sessionOver = s != null && !leases.isEmpty() && now - s.liveUntilNanos() >= 0;
        List<LeaseImpl> batch = new ArrayList<>();
        boolean anyDue = false;
        for (LeaseImpl lease : leases) {
            Thread holder = lease.ownerThread();
            if (holder != null && !holder.isAlive()) {
                // Nobody can ever release it: lost, and released at the store.
                if (lease.markLost("the thread that held it (" + holder.getName() + ") ended without unlocking")) {
                    store.release(lease.key(), lease.owner(), " of a dead thread");
                }
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
            if (!lease.renews() || lease.renewal().isTaken()) {
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
            scheduleBy(Math.max(earliest, store.nanoTime() + TimeUnit.MILLISECONDS.toNanos(1)));
        }
    }

    /** A session store keeps a hold as long as the session: give back a lease whose own time is over. */
    private void releaseExpired(LeaseImpl lease) {
        store.release(lease.key(), lease.owner(), " past its lease time");
    }

    private void renew(List<LeaseImpl> due, long sentNanos) {
        List<LeaseImpl> batch = new ArrayList<>(due.size());
        List<RenewRequest> requests = new ArrayList<>(due.size());
        for (LeaseImpl lease : due) {
            if (lease.renewal().start()) { // not while extend() renews it
                batch.add(lease);
                requests.add(new RenewRequest(lease.key(), lease.owner(), lease.leaseMillis()));
            }
        }
        if (batch.isEmpty()) {
            return;
        }
        store.renew(requests, null, (lostOwners, error) -> {
            int lost = 0;
            long now = store.nanoTime();
            for (LeaseImpl lease : batch) {
                if (error != null) {
                    lease.nextRenewNanos = now + Math.max(MIN_RETRY_NANOS, lease.leaseNanos() / 10);
                } else if (lostOwners.contains(lease.owner())) {
                    lost++;
                    lease.markLost("the store no longer held it at renewal");
                } else {
                    lease.confirmed(sentNanos);
                }
                lease.renewal().end();
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

    /**
     * Renews the lease now with a new lease time. Outcomes, each leaving the watchdog in charge of what
     * is still held:
     *
     * <ul>
     *   <li>the store confirmed it in time: the new deadline and lease time apply;
     *   <li>the store no longer held it: lost;
     *   <li>the store confirmed it, but the answer came after the new local deadline, or the lease was
     *       declared lost while the request was on its way: lost, and the hold is given back, since the
     *       store may now keep it for the new lease time (or a session's life) with nobody renewing or
     *       watching it;
     *   <li>no answer (a failure, the operation timeout): the store may or may not have applied it; the
     *       lease stays held, renewed by the watchdog at once on its old lease time (when it renews).
     * </ul>
     *
     * <p>From the moment the request is sent, the deadline is the earlier of the old one and the one the
     * new time gives: the store may apply a shorter time before its answer arrives, or without one.
     */
    void extend(LeaseImpl lease, long millis) {
        lease.checkValid();
        RenewalClaim claim = lease.renewal();
        while (!claim.start()) {
            lease.checkValid(); // a lease passed on keeps its claim for good
            CompletableFuture<Void> inFlight = claim.inFlight();
            if (inFlight != null) {
                inFlight.join(); // bounded: every store call ends within the operation timeout
            }
        }
        long sent = store.nanoTime();
        long deadline = LeaseImpl.newDeadline(sent, millis);
        lease.shortenDeadline(deadline); // the store may apply a shorter time before it answers
        Set<String> lostOwners;
        try {
            lostOwners = Waits.join(
                    store.renew(List.of(new RenewRequest(lease.key(), lease.owner(), millis)), lease.name(), null));
        } catch (RuntimeException unknownOutcome) {
            lease.nextRenewNanos = store.nanoTime(); // applied or not: renewed at once, on the old time
            claim.end();
            rescheduleFor(lease);
            throw unknownOutcome;
        }
        if (lostOwners.contains(lease.owner())) {
            claim.end();
            lease.markLost("the store no longer held it when it was extended");
            throw lease.lostException("the store no longer held it when it was extended");
        }
        boolean inTime = lease.isHeld() && store.nanoTime() - deadline < 0;
        if (inTime) {
            lease.renewed(sent, millis);
            owedCut(lease, sent);
        }
        claim.end();
        if (!inTime || lease.isLost()) { // lost: the deadline check of a tick ran meanwhile
            String reason = "the store's answer to extend came after the lease's new local deadline";
            lease.markLost(reason);
            if (lease.isLost()) {
                // Lost here but maybe held there, for the new time: given back, retried like any release.
                store.giveBack(lease.key(), lease.owner(), " after a late extend", lease.leaseMillis());
            }
            throw lease.notValid(); // lost here, or released by its holder meanwhile
        }
        rescheduleFor(lease);
        lease.checkValid(); // the store session may have ended meanwhile
    }
}
