package dev.dlock.internal;

import dev.dlock.Lease;
import dev.dlock.LeaseLostException;
import dev.dlock.spi.LockKey;
import dev.dlock.spi.RenewRequest;
import java.time.Duration;
import java.util.List;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.ForkJoinPool;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.atomic.AtomicInteger;

/**
 * One holder's lease: a grant from the store, or a hold passed on from another caller of this client
 * ({@link Cohort}, {@link #passOn}), which keeps the store's owner id and expiry and takes the next token.
 *
 * <p>Deadline: computed from {@code System.nanoTime()} taken before the grant or renewal request was
 * sent, plus the lease time, minus a drift margin of 1% + 2 ms, so the local deadline always falls before
 * the store's expiry. It never uses wall-clock time and never the arrival time of a reply.
 *
 * <p>Concurrency: the state moves once from HELD to RELEASED or LOST by compare-and-set; timing fields
 * are volatile and written only by the renewal path ({@link Watchdog}, {@link #extend}), which sends one
 * renewal of a lease at a time ({@link #startRenewal()}).
 *
 * <p>Lost signal: {@link #whenLost()} completes on the common pool, never on a store or scheduler thread.
 */
final class LeaseImpl implements HeldLease {
    private static final int HELD = 0;
    private static final int RELEASED = 1;
    private static final int LOST = 2;

    private static final long RELEASE_RETRY_MIN_NANOS = TimeUnit.MILLISECONDS.toNanos(50);
    private static final long RELEASE_RETRY_MAX_NANOS = TimeUnit.SECONDS.toNanos(1);

    private final Parts parts;
    final LockKey key;
    final String owner;
    final boolean renew;
    private final long token;
    /** 0 for a store grant; n for the n-th holder the hold was passed to without the store. */
    final int pass;
    /** When the store grant this lease descends from was requested: bounds a chain of passes. */
    final long chainStartNanos;

    private final long grantedNanos;
    private final AtomicInteger state = new AtomicInteger(HELD);
    private final CompletableFuture<LeaseLostException> lost = new CompletableFuture<>();
    private volatile long leaseMillis;
    private volatile long deadlineNanos;
    private volatile String lostReason;
    /** Renewal bookkeeping of the watchdog: when this lease is next due. */
    volatile long nextRenewNanos;
    /** Set while a thread's {@code Lock} view holds this lease, so the watchdog can see the thread die. */
    private volatile Thread ownerThread;
    /**
     * The renewal of this lease at the store (watchdog's or extend's), or null; written under this
     * object's monitor, read without it by {@link #isRenewing()}.
     */
    private volatile CompletableFuture<Void> renewal;
    /** The lease this hold was passed to ({@link #passOn}); losses of the hold are forwarded to it. */
    private volatile LeaseImpl successor;
    /**
     * Set when its thread took the read lock under this write hold (a downgrade): the store counts that
     * read beside this hold, so the hold must go back to the store, never to another local writer
     * ({@link Cohort}), or that writer would write while the downgraded reader reads.
     */
    volatile boolean downgraded;

    /** A store grant on the given terms, asked for at {@code sentNanos}. */
    LeaseImpl(Parts parts, Terms terms, String owner, long token, long sentNanos) {
        this.parts = parts;
        this.key = terms.key();
        this.owner = owner;
        this.token = token;
        this.renew = terms.renew();
        this.pass = 0;
        this.chainStartNanos = sentNanos;
        this.grantedNanos = sentNanos;
        this.leaseMillis = terms.leaseMillis();
        renewed(sentNanos);
    }

    /** The next holder of {@code from}'s store hold: same owner at the store, same timing, next token. */
    private LeaseImpl(LeaseImpl from) {
        this.parts = from.parts;
        this.key = from.key;
        this.owner = from.owner;
        this.token = from.token + 1;
        this.renew = from.renew;
        this.pass = from.pass + 1;
        this.chainStartNanos = from.chainStartNanos;
        this.grantedNanos = System.nanoTime();
        this.leaseMillis = from.leaseMillis;
        this.deadlineNanos = from.deadlineNanos;
        this.nextRenewNanos = from.nextRenewNanos;
    }

    /**
     * Ends this lease by passing its store hold to a new lease object for the next local holder ({@link
     * Cohort}). The store is not told: the hold, its owner id and its expiry stay as they are. The
     * renewal claim of this object is kept for good, so a watchdog tick that still sees it cannot renew
     * it; the new object is renewed from now on. A loss this object learns of later is forwarded.
     *
     * @return the new lease (not yet in the watchdog), or null if this lease is not held or a renewal of
     *     it is at the store
     */
    LeaseImpl passOn() {
        if (!startRenewal()) {
            return null; // its answer will be applied to this object: release to the store instead
        }
        LeaseImpl next = new LeaseImpl(this);
        successor = next; // before the state change, so that a concurrent markLost finds it
        if (!state.compareAndSet(HELD, RELEASED)) {
            successor = null;
            endRenewal();
            return null;
        }
        parts.watchdog().remove(this);
        CompletableFuture<Void> claim;
        synchronized (this) {
            claim = renewal; // stays set: startRenewal() on this object fails from now on
        }
        claim.complete(null); // an extend() waiting for it wakes and sees the lease released
        lost.cancel(false);
        parts.events().released(key.name(), System.nanoTime() - grantedNanos);
        return next;
    }

    static long driftNanos(long leaseMillis) {
        return TimeUnit.MILLISECONDS.toNanos(leaseMillis / 100 + 2);
    }

    long leaseNanos() {
        return TimeUnit.MILLISECONDS.toNanos(leaseMillis);
    }

    long deadlineNanos() {
        return deadlineNanos;
    }

    long leaseMillis() {
        return leaseMillis;
    }

    /** The store confirmed the lease with a request sent at {@code sentNanos}. */
    void renewed(long sentNanos) {
        long lease = leaseNanos();
        deadlineNanos = sentNanos + lease - driftNanos(leaseMillis);
        nextRenewNanos = sentNanos + lease / 3;
    }

    boolean isHeld() {
        return state.get() == HELD;
    }

    @Override
    public String name() {
        return key.name();
    }

    @Override
    public long fencingToken() {
        return token;
    }

    @Override
    public List<Lease> parts() {
        return List.of(this);
    }

    @Override
    public boolean isValid() {
        return state.get() == HELD
                && System.nanoTime() - deadlineNanos < 0
                && parts.store().leasesValid();
    }

    @Override
    public void checkValid() {
        if (isValid()) {
            return;
        }
        if (state.get() == RELEASED) {
            throw new LeaseLostException("lease on '" + key.name() + "' (token " + token + ") was released");
        }
        String reason = lostReason;
        if (reason == null) {
            reason = parts.store().leasesValid() ? "its local deadline passed" : "the store session is not live";
        }
        throw lostException(reason);
    }

    private LeaseLostException lostException(String reason) {
        return new LeaseLostException("lease on '" + key.name() + "' (token " + token + ") was lost: " + reason);
    }

    @Override
    public Duration remaining() {
        long left = deadlineNanos - System.nanoTime();
        return state.get() == HELD && left > 0 ? Duration.ofNanos(left) : Duration.ZERO;
    }

    /**
     * Claims the right to send a renewal of this lease. At most one renewal is at the store at a time,
     * so the store's expiry is always the one the last answered request set, which is the one the local
     * deadline is computed from (two overlapping renewals may reach the store in either order).
     *
     * @return false if a renewal is in flight
     */
    synchronized boolean startRenewal() {
        if (renewal != null) {
            return false;
        }
        renewal = new CompletableFuture<>();
        return true;
    }

    /** Whether a renewal of this lease is at the store (the watchdog leaves it alone meanwhile). */
    boolean isRenewing() {
        return renewal != null;
    }

    /** Ends the renewal claimed by {@link #startRenewal()}, after its answer was applied. */
    void endRenewal() {
        CompletableFuture<Void> done;
        synchronized (this) {
            done = renewal;
            renewal = null;
        }
        if (done != null) {
            done.complete(null);
        }
    }

    private synchronized CompletableFuture<Void> renewalInFlight() {
        return renewal;
    }

    @Override
    public Duration heldFor() {
        return Duration.ofNanos(System.nanoTime() - grantedNanos);
    }

    @Override
    public void extend(Duration leaseTime) {
        long millis = Checks.leaseTime(leaseTime).toMillis();
        checkValid();
        while (!startRenewal()) {
            checkValid(); // a lease passed on keeps its claim for good
            CompletableFuture<Void> inFlight = renewalInFlight();
            if (inFlight != null) {
                inFlight.join(); // bounded: every store call ends within the operation timeout
            }
        }
        try {
            long sent = System.nanoTime();
            var lostOwners = Waits.join(parts.store().renew(List.of(new RenewRequest(key, owner, millis)), key.name()));
            if (lostOwners.contains(owner)) {
                markLost("the store no longer held it when it was extended");
                throw lostException("the store no longer held it when it was extended");
            }
            leaseMillis = millis;
            renewed(sent);
        } finally {
            endRenewal();
        }
        // The watchdog may have declared the lease lost (its deadline passed) while the renewal was on
        // its way; the store's answer does not bring it back.
        checkValid();
        parts.watchdog().rescheduleFor(this);
    }

    @Override
    public CompletableFuture<LeaseLostException> whenLost() {
        return lost;
    }

    /**
     * Declares the lease lost (renewal refused or failed past the deadline, session gone); idempotent.
     *
     * @return true if this call moved the lease from held to lost
     */
    boolean markLost(String reason) {
        if (!state.compareAndSet(HELD, LOST)) {
            LeaseImpl next = successor;
            if (next != null) {
                next.markLost(reason); // the hold was passed on: its current holder is told
            }
            return false;
        }
        lostReason = reason;
        parts.watchdog().remove(this);
        parts.events().lost(key.name(), reason);
        LeaseLostException signal = lostException(reason);
        CompletableFuture.runAsync(() -> lost.complete(signal), ForkJoinPool.commonPool());
        parts.queues().wake(key, null);
        return true;
    }

    /**
     * The thread whose {@code Lock} view holds this lease died without unlocking: nobody can ever
     * release it, so the lease is declared lost and released at the store.
     */
    void abandonByDeadThread() {
        if (markLost("the thread that held it (" + ownerThread.getName() + ") ended without unlocking")) {
            parts.store().release(key, owner, " of a dead thread");
        }
    }

    @Override
    public void ownedBy(Thread thread) {
        ownerThread = thread;
    }

    /** The thread whose {@code Lock} view holds this lease, or null for a lease-API lease. */
    Thread ownerThread() {
        return ownerThread;
    }

    @Override
    public String lostReason() {
        return state.get() == LOST ? (lostReason != null ? lostReason : "lost") : null;
    }

    @Override
    public void close() {
        CompletableFuture<Boolean> release = releaseAsync();
        if (release != null) {
            Waits.join(release);
        }
    }

    /**
     * Starts the release; null if the lease was not held. The hold passes to the next local caller
     * waiting for it when {@link Cohort} allows, else it goes back to the store. When the store says it
     * no longer held the lease, the lease counts as lost (its lost signal fires).
     */
    CompletableFuture<Boolean> releaseAsync() {
        Cohort cohort = parts.cohort();
        if (cohort.pass(this)) {
            return CompletableFuture.completedFuture(true);
        }
        return releaseToStore(cohort.localWakeDelayNanos(this));
    }

    /**
     * Like {@link #releaseAsync()}, without trying to pass the hold to another local caller first.
     *
     * @param localWakeDelayNanos how long our own waiters hold back after the release (the store's
     *     wake-up still reaches them), so that other clients' waiters get their turn; 0 for none
     */
    CompletableFuture<Boolean> releaseToStore(long localWakeDelayNanos) {
        if (!state.compareAndSet(HELD, RELEASED)) {
            return null;
        }
        parts.watchdog().remove(this);
        long held = System.nanoTime() - grantedNanos;
        if (localWakeDelayNanos != 0) {
            // Before the release: a store may deliver its wake-up while the release is on its way.
            parts.queues().holdBack(key, System.nanoTime() + localWakeDelayNanos);
        }
        return parts.store().release(key, owner, "").whenComplete((wasHeld, error) -> {
            if (error == null && !wasHeld) {
                lostReason = "the store no longer held it at release";
                state.set(LOST);
                parts.events().lost(key.name(), lostReason);
                LeaseLostException signal = lostException(lostReason);
                CompletableFuture.runAsync(() -> lost.complete(signal), ForkJoinPool.commonPool());
            } else {
                lost.cancel(false);
                if (error == null) {
                    parts.events().released(key.name(), held);
                } else {
                    retryRelease(System.nanoTime() + leaseNanos());
                }
            }
            if (localWakeDelayNanos == 0) {
                parts.queues().wake(key, null);
            } else {
                parts.store().schedule(() -> parts.queues().wake(key, null), localWakeDelayNanos);
            }
        });
    }

    /**
     * A release the store did not confirm is retried in the background until it is, or until the store
     * would have expired the lease anyway. A store whose lease is a session (ZooKeeper) never expires a
     * hold while the session lives, so without this one failed release (a connection lost at that moment)
     * would keep the lock from everyone until the client closes.
     */
    private void retryRelease(long untilNanos) {
        long delay = Math.max(RELEASE_RETRY_MIN_NANOS, Math.min(RELEASE_RETRY_MAX_NANOS, leaseNanos() / 10));
        Store store = parts.store();
        if (store.isClosed() || System.nanoTime() + delay - untilNanos >= 0) {
            return;
        }
        store.schedule(
                () -> {
                    if (store.isClosed()) {
                        return;
                    }
                    store.release(key, owner, " again").whenComplete((wasHeld, error) -> {
                        if (error != null) {
                            retryRelease(untilNanos);
                        } else {
                            parts.queues().wake(key, null);
                        }
                    });
                },
                delay);
    }

    @Override
    public String toString() {
        return "Lease[" + key.name() + ", " + key.mode() + ", token=" + token + ", "
                + (state.get() == HELD
                        ? "held, " + remaining().toMillis() + "ms left"
                        : state.get() == LOST ? "lost" : "released")
                + "]";
    }
}
