package dev.dlock.internal.lease;

import dev.dlock.Lease;
import dev.dlock.LeaseLostException;
import dev.dlock.internal.base.Checks;
import dev.dlock.internal.base.Waits;
import dev.dlock.spi.LockKey;
import java.lang.invoke.MethodHandles;
import java.lang.invoke.VarHandle;
import java.time.Duration;
import java.util.List;
import java.util.concurrent.CompletableFuture;

/**
 * One holder's lease: a grant from the store, or a hold passed on from another caller of this client
 * (the cohort hand-off, {@link #passOn}), which keeps the store's owner id and expiry and takes the next
 * token. This class is the lease itself: its state, its deadline and its lost signal. Renewing it is the
 * {@link Watchdog}'s, one renewal at a time ({@link RenewalClaim}); how it ends (passed on, or given back
 * to the store) is decided above this package, behind {@link HoldRoute}.
 *
 * <p>Its deadline and renewal times are the superclass's ({@link LeaseTiming}).
 *
 * <p>Concurrency: the state moves once from HELD to RELEASED or LOST by compare-and-set; the timing is
 * written only by the renewal path ({@link Watchdog}), which sends one renewal of a lease at a time
 * ({@link #renewal()}).
 *
 * <p>Lost signal: {@link #whenLost()}, made when first asked for ({@link LostSignal}, a superclass).
 */
public final class LeaseImpl extends LeaseTiming implements HeldLease {
    private static final int HELD = 0;
    private static final int RELEASED = 1;
    private static final int LOST = 2;

    private static final VarHandle STATE;

    static {
        try {
            STATE = MethodHandles.lookup().findVarHandle(LeaseImpl.class, "state", int.class);
        } catch (ReflectiveOperationException e) {
            throw new ExceptionInInitializerError(e);
        }
    }

    private final LeaseParts parts;
    private final LockKey key;
    private final String owner;
    private final boolean renew;
    private final long token;
    /** 0 for a store grant; n for the n-th holder the hold was passed to without the store. */
    private final int pass;
    /** When the store grant this lease descends from was requested: bounds a chain of passes. */
    private final long chainStartNanos;
    /** The holders that passed this hold on before this lease ({@link HoldChain}); null for a store grant. */
    private final HoldChain chain;

    private final long grantedNanos;
    /**
     * HELD (0, the default: no volatile write in the constructor), then RELEASED or LOST, moved by
     * compare-and-set through {@link #STATE}; a field rather than an AtomicInteger: one object less.
     */
    private volatile int state;

    private volatile String lostReason;
    /** Set while a thread's {@code Lock} view holds this lease, so the watchdog can see the thread die. */
    private volatile Thread ownerThread;
    /** The right to send a renewal of this lease: one renewal at the store at a time. */
    private final RenewalClaim renewal = new RenewalClaim();
    /** The lease this hold was passed to ({@link #passOn}); losses of the hold are forwarded to it. */
    private volatile LeaseImpl successor;
    /**
     * Set when its thread took the read lock under this write hold (a downgrade): the store counts that
     * read beside this hold, so the hold must go back to the store, never to another local writer
     * (the cohort hand-off), or that writer would write while the downgraded reader reads.
     */
    private volatile boolean downgraded;

    /**
     * A store grant on the given terms.
     *
     * @param parts what the lease uses
     * @param terms the view's terms
     * @param owner the owner id of the grant
     * @param token the store's fencing token
     * @param sentNanos when the granted request was sent
     */
    public LeaseImpl(LeaseParts parts, Terms terms, String owner, long token, long sentNanos) {
        super(terms.leaseMillis(), sentNanos);
        this.parts = parts;
        this.key = terms.key();
        this.owner = owner;
        this.token = token;
        this.renew = terms.renew();
        this.pass = 0;
        this.chainStartNanos = sentNanos;
        this.chain = null;
        this.grantedNanos = sentNanos;
    }

    /** The next holder of {@code from}'s store hold: same owner at the store, same timing, next token. */
    private LeaseImpl(LeaseImpl from) {
        super(from);
        this.parts = from.parts;
        this.key = from.key;
        this.owner = from.owner;
        this.token = from.token + 1;
        this.renew = from.renew;
        this.pass = from.pass + 1;
        this.chainStartNanos = from.chainStartNanos;
        this.chain = from.chain != null ? from.chain : new HoldChain();
        this.grantedNanos = parts.store().nanoTime();
    }

    /**
     * Ends this lease by passing its store hold to a new lease object for the next local holder (the
     * cohort hand-off). The store is not told: the hold, its owner id and its expiry stay as they are. The
     * renewal claim of this object is kept for good, so a watchdog tick that still sees it cannot renew
     * it; the new object is renewed from now on. A loss this object learns of later is forwarded. This
     * lease's lost signal waits for the end of the hold ({@link HoldChain}).
     *
     * @param claimed whether the caller holds this lease's renewal claim ({@link #renewal()}), taken
     *     for the store's confirmation of the hold; it is kept either way
     * @return the new lease (not yet in the watchdog), or null if this lease is not held or a renewal of
     *     it is at the store
     */
    public LeaseImpl passOn(boolean claimed) {
        if (!claimed && !renewal.start()) {
            return null; // its answer will be applied to this object: release to the store instead
        }
        LeaseImpl next = new LeaseImpl(this);
        successor = next; // before the state change, so that a concurrent markLost finds it
        if (!STATE.compareAndSet(this, HELD, RELEASED)) {
            successor = null;
            if (!claimed) {
                renewal.end();
            }
            return null;
        }
        parts.watchdog().remove(this);
        renewal.keepForGood(); // an extend() waiting for it wakes and sees the lease released
        next.chain.add(this::settlePassedOn);
        parts.events().released(key.name(), parts.store().nanoTime() - grantedNanos);
        return next;
    }

    /**
     * Settles the lost signal of a lease that passed its hold on, once the hold ended ({@link
     * HoldChain}): cancelled as for a clean release, or completed when the store no longer held it.
     *
     * @param reason why the store no longer held the hold, or null when it was given back as held
     */
    private void settlePassedOn(String reason) {
        if (reason == null) {
            endLostSignal(CLEAN);
            return;
        }
        parts.events().lost(key.name(), reason);
        endLostSignal(lostException(reason + " (after it passed the hold to another caller)"));
    }

    /** The hold this lease has ends here: the holders that passed it on learn how ({@link HoldChain}). */
    private void endChain(String lostReason) {
        if (chain != null) {
            chain.end(lostReason);
        }
    }

    /** {@return the resource and mode} */
    public LockKey key() {
        return key;
    }

    /** {@return the owner id the store knows this hold by (kept across passes)} */
    public String owner() {
        return owner;
    }

    /** {@return whether the watchdog renews this lease} */
    public boolean renews() {
        return renew;
    }

    /** {@return how many times the store hold was passed on before this lease, 0 for a grant} */
    public int pass() {
        return pass;
    }

    /** {@return when the store grant this lease descends from was requested (bounds a chain of passes)} */
    public long chainStartNanos() {
        return chainStartNanos;
    }

    /** Its thread took the read lock under this write hold (a downgrade): the hold must not pass on. */
    public void markDowngraded() {
        downgraded = true;
    }

    /** {@return whether {@link #markDowngraded()} was called} */
    public boolean isDowngraded() {
        return downgraded;
    }

    /**
     * The store renewed the lease with a request sent at {@code sentNanos} (the watchdog's batch): the new
     * deadline, cut by any store clock jump counted since that request was sent. A confirmation before a
     * pass only reads the hold ({@link #shownHeld}) and leaves the deadline alone.
     *
     * @param sentNanos when that request was sent
     */
    void confirmed(long sentNanos) {
        renewed(sentNanos);
        parts.watchdog().owedCut(this, sentNanos);
    }

    /** {@return the right to send a renewal of this lease (one at the store at a time)} */
    public RenewalClaim renewal() {
        return renewal;
    }

    /** {@return whether the lease is held here: not released, passed on or lost (its deadline may have passed)} */
    public boolean isHeld() {
        return state == HELD;
    }

    boolean isLost() {
        return state == LOST;
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
        return state == HELD && beforeDeadline() && parts.store().leasesValid();
    }

    @Override
    public void checkValid() {
        if (!isValid()) {
            throw notValid();
        }
    }

    /** Why the lease is not valid (it is not). */
    LeaseLostException notValid() {
        if (state == RELEASED) {
            return new LeaseLostException("lease on '" + key.name() + "' (token " + token + ") was released");
        }
        String reason = lostReason;
        if (reason == null) {
            reason = parts.store().leasesValid() ? "its local deadline passed" : "the store session is not live";
        }
        return lostException(reason);
    }

    LeaseLostException lostException(String reason) {
        return new LeaseLostException("lease on '" + key.name() + "' (token " + token + ") was lost: " + reason);
    }

    @Override
    public Duration remaining() {
        if (state != HELD) {
            return Duration.ZERO;
        }
        long now = parts.store().nanoTime();
        long left = Math.min(deadlineNanos() - now, parts.watchdog().sessionLeftNanos(now));
        return left > 0 ? Duration.ofNanos(left) : Duration.ZERO;
    }

    @Override
    public Duration heldFor() {
        return Duration.ofNanos(heldForNanos());
    }

    @Override
    long nanoTime() {
        return parts.store().nanoTime();
    }

    /** {@return {@link #heldFor()} in nanoseconds, without a {@code Duration} (the release path counts it)} */
    public long heldForNanos() {
        return parts.store().nanoTime() - grantedNanos;
    }

    @Override
    public void extend(Duration leaseTime) {
        parts.watchdog().extend(this, Checks.leaseMillis(leaseTime));
    }

    /**
     * Declares the lease lost (renewal refused or failed past the deadline, session gone); idempotent.
     *
     * @param reason why, for the lost signal and the listener
     * @return true if this call moved the lease from held to lost
     */
    public boolean markLost(String reason) {
        if (!STATE.compareAndSet(this, HELD, LOST)) {
            LeaseImpl next = successor;
            if (next != null) {
                next.markLost(reason); // the hold was passed on: its current holder is told
            }
            return false;
        }
        lostReason = reason;
        parts.watchdog().remove(this);
        parts.events().lost(key.name(), reason);
        endLostSignal(lostException(reason));
        endChain(reason);
        parts.route().ended(key);
        return true;
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
        return state == LOST ? (lostReason != null ? lostReason : "lost") : null;
    }

    @Override
    public void closeAfter(Duration delay) {
        if (Checks.releaseDelay(delay).isZero() || !isHeld()) {
            close();
        } else {
            parts.watchdog().laterReleases().plan(this, delay.toNanos());
        }
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
     * waiting for it when the cohort hand-off allows, else it goes back to the store ({@link
     * HoldRoute}). When the store says it no longer held the lease, the lease counts as lost.
     *
     * @return completes with true once passed or released, false if the store no longer held it
     */
    public CompletableFuture<Boolean> releaseAsync() {
        return parts.route().release(this);
    }

    /**
     * Ends the hold here for a release to the store: from held to released, out of the watchdog.
     *
     * @return false if the lease was not held
     */
    public boolean stopHolding() {
        if (!STATE.compareAndSet(this, HELD, RELEASED)) {
            return false;
        }
        parts.watchdog().remove(this);
        return true;
    }

    /**
     * The store answered the release sent after {@link #stopHolding()}, or it failed.
     *
     * @param heldThere false when the store answered that it no longer held the lease: it counts as lost
     */
    public void releaseAnswered(boolean heldThere) {
        if (heldThere) {
            endLostSignal(CLEAN);
            endChain(null);
            return;
        }
        lostReason = "the store no longer held it at release";
        state = LOST;
        parts.events().lost(key.name(), lostReason);
        endLostSignal(lostException(lostReason));
        endChain(lostReason);
    }

    @Override
    public String toString() {
        return "Lease[" + key.name() + ", " + key.mode() + ", token=" + token + ", "
                + (state == HELD ? "held, " + remaining().toMillis() + "ms left" : state == LOST ? "lost" : "released")
                + "]";
    }
}
