package dev.dlock;

import java.time.Duration;
import java.util.Optional;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.locks.Condition;
import java.util.concurrent.locks.Lock;

/**
 * A lock shared by every client of one store, with two ways to use it.
 *
 * <h2>As a {@link Lock}: thread-owned and reentrant</h2>
 *
 * <p>{@link #lock()}, {@link #lockInterruptibly()}, {@link #tryLock()} and {@link #unlock()} behave like
 * {@link java.util.concurrent.locks.ReentrantLock}: the thread that locked must unlock, once per lock.
 * {@code unlock()} by another thread throws {@link IllegalMonitorStateException}; {@code unlock()} of a
 * lock whose lease was lost meanwhile throws {@link LeaseLostException}, so the caller learns that the
 * critical section was not protected to its end. {@link #lock()} waits without limit, but a store
 * failure throws {@link LockBackendException} rather than waiting on.
 *
 * <h2>As leases: not bound to any thread</h2>
 *
 * <p>{@link #acquire(Duration)}, {@link #tryAcquire()} and {@link #acquireAsync(Duration)} return a
 * {@link Lease} that any thread may close. Lease acquisitions are not reentrant: a second {@code
 * acquire} waits like any other caller.
 *
 * <p>Instances are cheap views; every view of the same name in one client shares the thread-owned
 * state.
 */
public interface DistributedLock extends Lock {
    /** The shortest lease a lock accepts ({@link #withLeaseTime}): 10 ms. */
    Duration MIN_LEASE_TIME = Duration.ofMillis(10);

    /** The longest lease a lock accepts ({@link #withLeaseTime}): 365 days. */
    Duration MAX_LEASE_TIME = Duration.ofDays(365);

    /**
     * The lock name as given.
     *
     * @return the name
     */
    String name();

    /**
     * Waits up to {@code wait} for the lock.
     *
     * @param wait the longest time to wait; zero means try once
     * @return the lease, held
     * @throws LockTimeoutException if the wait ran out
     * @throws LockRejectedException if the local queue is full
     * @throws LockBackendException if the store failed or did not answer in time
     * @throws LockException with an {@link InterruptedException} cause if the thread was interrupted;
     *     the interrupt flag is set again
     */
    Lease acquire(Duration wait);

    /**
     * Waits up to the client's default wait time.
     *
     * @return the lease, held
     * @throws LockTimeoutException if the wait ran out
     * @see #acquire(Duration)
     */
    Lease acquire();

    /**
     * Takes the lock if it is free now, after one round trip to the store.
     *
     * @return the lease, or empty when the lock is busy
     * @throws LockBackendException if the store failed or did not answer in time
     */
    Optional<Lease> tryAcquire();

    /**
     * Starts waiting without blocking the caller. Cancelling the future stops the wait and leaves no
     * holder behind: a grant that arrives after the cancel is released at once.
     *
     * @param wait the longest time to wait
     * @return completes with the lease, or exceptionally with the exceptions of {@link
     *     #acquire(Duration)}
     */
    CompletableFuture<Lease> acquireAsync(Duration wait);

    /**
     * A view of this lock whose grants use another lease time (the client's default otherwise).
     *
     * @param leaseTime how long the store keeps a grant without renewal: at least 10 ms, at most 365 days
     * @return a view sharing this lock's state
     * @throws IllegalArgumentException if the time is null or out of range
     */
    DistributedLock withLeaseTime(Duration leaseTime);

    /**
     * A view of this lock whose leases are renewed in the background or not. Without renewal a lease
     * simply runs out after its lease time unless extended, which suits jobs that must not run longer.
     *
     * @param renew whether to renew
     * @return a view sharing this lock's state
     */
    DistributedLock withRenewal(boolean renew);

    /**
     * {@link #unlock()} with a minimum hold: the thread lets go of the lock now, but the lease stays held
     * (and renewed) for {@code delay} more and is released then, without a thread waiting ({@link
     * Lease#closeAfter}). A nested hold only counts down, as with {@code unlock()}; the delay applies when
     * the outermost hold ends. A thread that locks again meanwhile waits like any other caller.
     *
     * @param delay how long from now the lease stays held; zero or more, at most 365 days
     * @throws IllegalMonitorStateException if the current thread does not hold the lock
     * @throws LeaseLostException if the lease was lost while this thread held it
     * @throws IllegalArgumentException if the delay is null, negative or over 365 days (the lock stays held)
     */
    void unlockAfter(Duration delay);

    /**
     * Whether the current thread holds this lock through the {@link Lock} view.
     *
     * @return true if held by this thread
     */
    boolean isHeldByCurrentThread();

    /**
     * The lease behind the current thread's {@link Lock} hold, to read its fencing token.
     *
     * @return the lease, or empty when this thread does not hold the lock
     */
    Optional<Lease> currentLease();

    /**
     * Not supported: a condition would need a distributed wait set.
     *
     * @return never
     * @throws UnsupportedOperationException always
     */
    @Override
    Condition newCondition();
}
