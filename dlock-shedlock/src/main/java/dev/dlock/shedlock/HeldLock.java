package dev.dlock.shedlock;

import dev.dlock.DistributedLock;
import dev.dlock.Lease;
import dev.dlock.LeaseLostException;
import dev.dlock.spi.DriftMargin;
import java.time.Duration;
import java.util.Objects;
import java.util.Optional;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.atomic.AtomicBoolean;
import net.javacrumbs.shedlock.core.SimpleLock;

/**
 * One ShedLock lock held through a dlock {@link Lease} that is not renewed, so that the store frees it after
 * {@code lockAtMostFor}.
 *
 * <p>Minimum hold ({@code lockAtLeastFor}): {@link #unlock()} before it has passed cuts the lease at the
 * store to the time left plus {@link #AFTER_THE_MINIMUM} (so a node that dies now does not keep the lock
 * until {@code lockAtMostFor}) and hands it to the engine's delayed release ({@link Lease#closeAfter}),
 * which releases it when the time is up; no thread waits. A client that closes first leaves the hold to
 * the store's expiry for the time left (Redis, SQL, memory; ZooKeeper and etcd end it with the session).
 * When the time left reaches past the lease's own deadline (a {@code lockAtLeastFor} close to {@code
 * lockAtMostFor}), the lease is first extended to a time whose deadline, a {@link DriftMargin} before it,
 * still covers the hold.
 *
 * <p>Extension: {@link #extend} keeps the same lease, and so the same fencing token, with a new lease time;
 * the old instance is spent and a new one returned, as ShedLock asks.
 *
 * <p>Concurrency: one instance is unlocked or extended once; a second call, from any thread, throws
 * {@link IllegalStateException}. The lease itself is thread-safe.
 *
 * <p>Failure modes: a lease lost before {@code unlock()} (its {@code lockAtMostFor} passed, or the store lost
 * it) makes {@code unlock()} throw {@link LeaseLostException}, so the job learns that it was not protected
 * to its end. A loss after the job ended, while the lease is cut to the minimum hold, is not reported: a
 * remainder of a few milliseconds may run out before the store's answer arrives. Store errors propagate as
 * {@link dev.dlock.LockBackendException}; the store then frees the lock when the lease runs out.
 *
 * <p>Short {@code lockAtMostFor}: under {@link #SHORTEST_GRANT} the grant is asked with that lease time
 * and cut at once ({@link #shortened}), since a grant whose lease ends before the store's answer arrives
 * is void.
 */
final class HeldLock implements SimpleLock {
    private final Lease lease;
    /** When the request that granted or last extended the lease was sent: {@code lockAtMostFor} counts from here. */
    private final long sentNanos;
    /** When that request was answered, that is when the job (or its extension) started. */
    private final long startedNanos;

    /** The lease time that request set: the store lets the hold go by {@code startedNanos} plus this. */
    private final Duration leaseTime;

    private final Duration lockAtMostFor;
    private final Duration lockAtLeastFor;
    private final AtomicBoolean active = new AtomicBoolean(true);

    HeldLock(
            Lease lease,
            long sentNanos,
            long startedNanos,
            Duration leaseTime,
            Duration lockAtMostFor,
            Duration lockAtLeastFor) {
        this.lease = lease;
        this.sentNanos = sentNanos;
        this.startedNanos = startedNanos;
        this.leaseTime = leaseTime;
        this.lockAtMostFor = lockAtMostFor;
        this.lockAtLeastFor = lockAtLeastFor;
    }

    /**
     * The shortest lease time a grant is asked with. A grant is void when its lease ends before the
     * store's answer arrives, and a first grant on a loaded ZooKeeper took longer than 50 ms; a shorter
     * {@code lockAtMostFor} is applied after the grant ({@link #shortened}).
     */
    static final Duration SHORTEST_GRANT = Duration.ofSeconds(1);

    /**
     * How long past the minimum hold the store keeps a lock whose job ended early, if its node dies before
     * the release: the unlock cuts the lease to the time left plus this (ShedLock's own providers write
     * {@code lock_until} at the unlock for the same reason). Room for the release to come first: the
     * lease's local deadline is this much after it, so a late timer does not turn a clean release into a
     * lost lease.
     */
    static final Duration AFTER_THE_MINIMUM = Duration.ofSeconds(1);

    /** The shortest lease time a lock is shortened or extended to. */
    static final Duration SHORTEST_HOLD = Duration.ofMillis(50);

    /** The lease time to ask a grant with for a {@code lockAtMostFor}: the same, at least {@link #SHORTEST_GRANT}. */
    static Duration grantLeaseTime(Duration lockAtMostFor) {
        checkAtMost(lockAtMostFor);
        return lockAtMostFor.compareTo(SHORTEST_GRANT) < 0 ? SHORTEST_GRANT : lockAtMostFor;
    }

    /**
     * The lease time that leaves {@code lockAtMostFor} counted from {@code sentNanos}, when the grant was
     * asked with a longer one; at least {@link #SHORTEST_HOLD}. Empty when no shortening is needed.
     */
    static Optional<Duration> shortened(Duration lockAtMostFor, long sentNanos) {
        if (lockAtMostFor.compareTo(SHORTEST_GRANT) >= 0) {
            return Optional.empty();
        }
        Duration left = lockAtMostFor.minusNanos(System.nanoTime() - sentNanos);
        return Optional.of(left.compareTo(SHORTEST_HOLD) < 0 ? SHORTEST_HOLD : left);
    }

    private static void checkAtMost(Duration lockAtMostFor) {
        if (lockAtMostFor.compareTo(DistributedLock.MAX_LEASE_TIME) > 0) {
            throw new IllegalArgumentException("lockAtMostFor " + lockAtMostFor
                    + " is longer than the longest dlock lease, " + DistributedLock.MAX_LEASE_TIME);
        }
    }

    /**
     * A lease time whose local deadline is no sooner than {@code keepNanos} from now, although the engine
     * puts the deadline a {@link DriftMargin} before the lease time; at least the shortest lease.
     */
    static Duration holdFor(long keepNanos) {
        long keepMillis = TimeUnit.NANOSECONDS.toMillis(keepNanos) + 1;
        long fraction = DriftMargin.LEASE_FRACTION;
        long millis = (keepMillis + DriftMargin.FIXED_MILLIS) * fraction / (fraction - 1) + 1;
        return Duration.ofMillis(Math.max(millis, DistributedLock.MIN_LEASE_TIME.toMillis()));
    }

    Lease lease() {
        return lease;
    }

    boolean isActive() {
        return active.get();
    }

    @Override
    public void unlock() {
        spend("unlock");
        if (!lease.isValid()) {
            try {
                lease.checkValid();
            } finally {
                lease.close();
            }
        }
        long keepNanos = lockAtLeastFor.toNanos() - (System.nanoTime() - startedNanos);
        if (keepNanos > 0) {
            try {
                Duration cut = holdFor(keepNanos + AFTER_THE_MINIMUM.toNanos());
                if (lease.remaining().compareTo(cut) > 0) {
                    lease.extend(cut); // the store's own expiry: a node that dies now keeps the lock no longer
                } else if (lease.remaining().toNanos() <= keepNanos) { // lockAtLeastFor close to lockAtMostFor
                    lease.extend(holdFor(keepNanos));
                }
                lease.closeAfter(
                        Duration.ofNanos(Math.max(0, lockAtLeastFor.toNanos() - (System.nanoTime() - startedNanos))));
            } catch (LeaseLostException e) {
                // The job ended holding the lock; a short remainder may run out before the store's answer
                // arrives. The minimum hold has then passed, and the engine gave the hold back (a lease
                // lost on extend is released at the store, or by the watchdog at its deadline).
            }
        } else {
            lease.close();
        }
    }

    @Override
    public Optional<SimpleLock> extend(Duration lockAtMostFor, Duration lockAtLeastFor) {
        Objects.requireNonNull(lockAtMostFor, "lockAtMostFor must not be null");
        Objects.requireNonNull(lockAtLeastFor, "lockAtLeastFor must not be null");
        if (lockAtLeastFor.isNegative() || lockAtLeastFor.compareTo(lockAtMostFor) > 0) {
            throw new IllegalArgumentException("lockAtLeastFor " + lockAtLeastFor
                    + " must be zero or positive and not longer than lockAtMostFor " + lockAtMostFor);
        }
        checkAtMost(lockAtMostFor);
        Duration leaseTime = lockAtMostFor.compareTo(SHORTEST_HOLD) < 0 ? SHORTEST_HOLD : lockAtMostFor;
        spend("extend");
        if (!lease.isValid() || System.nanoTime() - sentNanos >= this.lockAtMostFor.toNanos()) {
            lease.close();
            awaitStoreExpiry();
            return Optional.empty();
        }
        long sent = System.nanoTime();
        try {
            lease.extend(leaseTime);
        } catch (LeaseLostException e) {
            return Optional.empty(); // see unlock()
        } catch (RuntimeException e) {
            active.set(true);
            throw e;
        }
        HeldLock next = new HeldLock(lease, sent, System.nanoTime(), leaseTime, lockAtMostFor, lockAtLeastFor);
        DlockLockAssert.replaced(this, next);
        return Optional.of(next);
    }

    /**
     * After a lease ran out here, waits until the store has let it go too, so that an {@code extend} that
     * answers empty leaves the lock free for the next caller. The engine ends a lease at a local deadline a
     * {@link DriftMargin} before the lease time counted from the request's
     * sending; the store counts from when it applied the request, at the latest when the answer arrived.
     * So the store lets go at most that margin plus the request's round trip after the local deadline (a
     * few milliseconds): this waits that long at most.
     */
    private void awaitStoreExpiry() {
        long marginNanos = DriftMargin.of(leaseTime).toNanos();
        long untilStoreExpiry = startedNanos + leaseTime.toNanos() - System.nanoTime();
        long waitNanos = Math.min(untilStoreExpiry, marginNanos + (startedNanos - sentNanos));
        if (waitNanos > 0) {
            try {
                TimeUnit.NANOSECONDS.sleep(waitNanos);
            } catch (InterruptedException e) {
                Thread.currentThread().interrupt();
            }
        }
    }

    private void spend(String operation) {
        if (!active.compareAndSet(true, false)) {
            throw new IllegalStateException("cannot " + operation + " the lock '" + lease.name()
                    + "': it was already unlocked or extended (extend returns a new lock to use instead)");
        }
    }

    @Override
    public String toString() {
        return "HeldLock[" + lease.name() + ", token " + lease.fencingToken() + (active.get() ? "" : ", spent") + "]";
    }
}
