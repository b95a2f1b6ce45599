package dev.dlock.internal.lease;

import dev.dlock.spi.DriftMargin;
import java.lang.invoke.MethodHandles;
import java.lang.invoke.VarHandle;
import java.util.concurrent.TimeUnit;

/**
 * The clock side of a lease: its lease time, its local deadline, when the store last confirmed it and when
 * the watchdog renews it next.
 *
 * <p>Deadline: computed from {@link #nanoTime()} (the client's clock) taken before the grant or renewal request was
 * sent, plus the lease time, minus a {@link DriftMargin}, so the local deadline always falls before the
 * store's expiry. It never uses wall-clock time and never the arrival time of a reply.
 *
 * <p>Design note: a superclass of {@link LeaseImpl} (and a subclass of its {@link LostSignal}) rather than a field, so that a lease stays one object
 * on the acquire path (as the engine's wait does). It holds numbers only: whether the lease is held is
 * {@link LeaseImpl}'s.
 *
 * <p>Concurrency: the fields are volatile and written by the renewal path ({@link Watchdog}), which sends
 * one renewal of a lease at a time ({@link RenewalClaim}), and {@link #confirmedNanos} also by the read
 * that confirms a hold before a pass between local callers, under the same claim; anyone reads them.
 * The one other writer is a store clock jump ({@link StoreClocks}), which cuts the deadline by
 * compare-and-set from a store thread; a confirmation that overwrites a cut deadline is cut again by the
 * watchdog ({@link StoreClocks#owedSince}).
 */
abstract class LeaseTiming extends LostSignal {
    private static final VarHandle DEADLINE;

    static {
        try {
            DEADLINE = MethodHandles.lookup().findVarHandle(LeaseTiming.class, "deadlineNanos", long.class);
        } catch (ReflectiveOperationException e) {
            throw new ExceptionInInitializerError(e);
        }
    }

    private volatile long leaseMillis;
    private volatile long deadlineNanos;
    /**
     * When the last request that showed the store held this hold (its grant, a renewal, or a read before a
     * pass) was sent: a pass without the store is allowed only to a waiter that asked before it, and only
     * shortly after it (the cohort hand-off).
     */
    private volatile long confirmedNanos;
    /** Renewal bookkeeping of the watchdog: when this lease is next due. */
    volatile long nextRenewNanos;

    /** The timing of a grant of {@code leaseMillis} whose request was sent at {@code sentNanos}. */
    LeaseTiming(long leaseMillis, long sentNanos) {
        this.leaseMillis = leaseMillis;
        renewed(sentNanos);
    }

    /** The same timing as {@code from}'s (a hold passed on keeps the store's expiry). */
    LeaseTiming(LeaseTiming from) {
        this.leaseMillis = from.leaseMillis;
        this.deadlineNanos = from.deadlineNanos;
        this.confirmedNanos = from.confirmedNanos;
        this.nextRenewNanos = from.nextRenewNanos;
    }

    /** The deadline a confirmation of {@code millis} sent at {@code sentNanos} gives. */
    static long newDeadline(long sentNanos, long millis) {
        return sentNanos + TimeUnit.MILLISECONDS.toNanos(millis) - DriftMargin.nanos(millis);
    }

    /** {@return the lease time of the last grant or renewal, in milliseconds} */
    public long leaseMillis() {
        return leaseMillis;
    }

    long leaseNanos() {
        return TimeUnit.MILLISECONDS.toNanos(leaseMillis);
    }

    long deadlineNanos() {
        return deadlineNanos;
    }

    /**
     * The store answered that it holds this lease, to a read sent at {@code sentNanos}: the hold was there
     * after that instant. Its expiry, and so the deadline, are unchanged.
     *
     * @param sentNanos when the read was sent
     */
    public void shownHeld(long sentNanos) {
        if (sentNanos - confirmedNanos > 0) {
            confirmedNanos = sentNanos;
        }
    }

    /** {@return when the request that last showed the store held this hold was sent} */
    public long confirmedNanos() {
        return confirmedNanos;
    }

    /** {@return now on the client's clock ({@code Store#nanoTime})} */
    abstract long nanoTime();

    /** Whether the local deadline has not passed yet. */
    final boolean beforeDeadline() {
        return nanoTime() - deadlineNanos < 0;
    }

    /** A renewal asking for another lease time was sent: the deadline is the earlier of the two. */
    void shortenDeadline(long deadline) {
        if (deadline - deadlineNanos < 0) {
            deadlineNanos = deadline;
        }
    }

    /** The store's clock jumped forward by {@code nanos}: the hold there ends that much earlier. */
    void cutDeadline(long nanos) {
        long deadline;
        do {
            deadline = deadlineNanos;
        } while (!DEADLINE.compareAndSet(this, deadline, deadline - nanos));
    }

    /** The store confirmed a new lease time with a request sent at {@code sentNanos}. */
    void renewed(long sentNanos, long newLeaseMillis) {
        leaseMillis = newLeaseMillis;
        renewed(sentNanos);
    }

    /**
     * The store confirmed the lease with a request sent at {@code sentNanos}.
     *
     * @param sentNanos when that request was sent
     */
    void renewed(long sentNanos) {
        deadlineNanos = newDeadline(sentNanos, leaseMillis);
        confirmedNanos = sentNanos;
        nextRenewNanos = sentNanos + leaseNanos() / 3;
    }
}
