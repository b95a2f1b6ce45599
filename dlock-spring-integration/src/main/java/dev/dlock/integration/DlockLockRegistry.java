package dev.dlock.integration;

import dev.dlock.Lease;
import dev.dlock.LockClient;
import java.time.Duration;
import java.util.Objects;
import java.util.Optional;
import org.springframework.integration.support.locks.DistributedLock;
import org.springframework.integration.support.locks.RenewableLockRegistry;
import org.springframework.scheduling.TaskScheduler;

/**
 * A Spring Integration {@link org.springframework.integration.support.locks.LockRegistry} backed by a dlock
 * {@link LockClient}: aggregators, {@code LockRequestHandlerAdvice}, {@code executeLocked} and {@code
 * LockRegistryLeaderInitiator} run on any dlock store unchanged.
 *
 * <h2>Use</h2>
 *
 * <pre>{@code
 * @Bean
 * DlockLockRegistry lockRegistry(LockClient dlock) {
 *     return new DlockLockRegistry(dlock, Duration.ofSeconds(10));
 * }
 *
 * @Bean
 * LockRegistryLeaderInitiator leaderInitiator(DlockLockRegistry lockRegistry) {
 *     return new LockRegistryLeaderInitiator(lockRegistry);
 * }
 * }</pre>
 *
 * <h2>The locks</h2>
 *
 * <p>{@link #obtain} returns a {@link DistributedLock} that is the dlock lock of the key (a {@code String},
 * used as the lock name in the client's namespace), seen through its {@link java.util.concurrent.locks.Lock}
 * view:
 *
 * <ul>
 *   <li>Thread-owned and reentrant like {@link java.util.concurrent.locks.ReentrantLock}, across every
 *       instance of the key in this client: the thread that locked unlocks, once per lock; {@code unlock()}
 *       by another thread throws {@link IllegalMonitorStateException}.
 *   <li>{@code lock()} and {@code tryLock()} ignore interrupts; {@code lockInterruptibly()} and {@code
 *       tryLock(time, unit)} stop waiting with {@link InterruptedException}. A store failure while waiting
 *       throws {@link dev.dlock.LockBackendException}.
 *   <li>The grant is a lease of this registry's lease time, or of the time-to-live given to {@link
 *       DistributedLock#lock(Duration)} and {@link DistributedLock#tryLock(Duration, Duration)}; a thread
 *       that already holds the lock re-enters its hold and the lease time stays. The client's watchdog
 *       renews held leases (unless the client was built with renewal off), so the time-to-live is how long
 *       the lock outlives a holder that died or lost the store.
 *   <li>A lease that was lost meanwhile is reported, not hidden: re-entering the lock and {@code unlock()}
 *       throw {@link dev.dlock.LeaseLostException} (the outermost {@code unlock()} still ends the hold).
 *   <li>{@code newCondition()} throws {@link UnsupportedOperationException}: a condition would need a
 *       distributed wait set.
 * </ul>
 *
 * <p>{@link #currentLease} gives the thread's lease, whose {@link Lease#fencingToken()} lets a resource
 * refuse a late writer, and whose {@link Lease#whenLost()} tells at once when the lock is gone.
 *
 * <h2>Renewal and expiry</h2>
 *
 * <p>{@link #renewLock(Object, Duration)} extends the current thread's lease. Renewal needs no task
 * scheduler, so {@link #setRenewalTaskScheduler} is refused. The registry keeps no lock objects (each
 * {@code obtain} is a cheap view, and the client forgets a hold when it ends), so there is nothing to
 * expire: it does not implement {@code ExpirableLockRegistry}.
 *
 * <p>The client is the caller's to close. Safe for use by many threads.
 */
public final class DlockLockRegistry implements RenewableLockRegistry<DistributedLock> {
    /** The lease time of a registry made without one: 30 seconds, as a {@link LockClient}'s default. */
    public static final Duration DEFAULT_LEASE_TIME = Duration.ofSeconds(30);

    private final LockClient client;
    private final Duration leaseTime;

    /**
     * A registry whose grants have the {@linkplain #DEFAULT_LEASE_TIME default lease time}.
     *
     * @param client the client the locks come from
     * @throws NullPointerException if the client is null
     */
    public DlockLockRegistry(LockClient client) {
        this(client, DEFAULT_LEASE_TIME);
    }

    /**
     * A registry whose grants have the given lease time unless a lock call names another.
     *
     * @param client the client the locks come from
     * @param leaseTime how long the store keeps a grant without renewal: at least 10 ms, at most 365 days
     * @throws NullPointerException if the client or the lease time is null
     * @throws IllegalArgumentException if the lease time is out of range
     */
    public DlockLockRegistry(LockClient client, Duration leaseTime) {
        this.client = Objects.requireNonNull(client, "client");
        Objects.requireNonNull(leaseTime, "leaseTime");
        if (leaseTime.compareTo(dev.dlock.DistributedLock.MIN_LEASE_TIME) < 0
                || leaseTime.compareTo(dev.dlock.DistributedLock.MAX_LEASE_TIME) > 0) {
            throw new IllegalArgumentException("leaseTime must be between " + dev.dlock.DistributedLock.MIN_LEASE_TIME
                    + " and " + dev.dlock.DistributedLock.MAX_LEASE_TIME + ", got " + leaseTime);
        }
        this.leaseTime = leaseTime;
    }

    /**
     * The lock of a key.
     *
     * @param lockKey the lock name, a non-empty {@code String} of at most 1,024 UTF-8 bytes
     * @return the lock; instances of one key share their holds
     * @throws IllegalArgumentException if the key is null, not a {@code String}, or not a valid lock name
     */
    @Override
    public DistributedLock obtain(Object lockKey) {
        return new RegistryLock(dlockLock(lockKey).withLeaseTime(leaseTime));
    }

    /**
     * Renews the current thread's lease of a key for the registry's lease time, now.
     *
     * @param lockKey the key
     * @throws IllegalMonitorStateException if the current thread does not hold the lock
     * @throws dev.dlock.LeaseLostException if the store no longer holds the lease
     * @throws dev.dlock.LockBackendException if the store did not answer in time
     */
    @Override
    public void renewLock(Object lockKey) {
        renewLock(lockKey, leaseTime);
    }

    /**
     * Renews the current thread's lease of a key for the given time, now; the client's background renewals
     * use that time from then on.
     *
     * @param lockKey the key
     * @param ttl the new lease time: at least 10 ms, at most 365 days
     * @throws IllegalMonitorStateException if the current thread does not hold the lock
     * @throws dev.dlock.LeaseLostException if the store no longer holds the lease
     * @throws dev.dlock.LockBackendException if the store did not answer in time
     * @throws IllegalArgumentException if the time is out of range
     */
    @Override
    public void renewLock(Object lockKey, Duration ttl) {
        Objects.requireNonNull(ttl, "ttl");
        currentLease(lockKey)
                .orElseThrow(() ->
                        new IllegalMonitorStateException("lock '" + lockKey + "' is not held by the current thread ("
                                + Thread.currentThread().getName() + ")"))
                .extend(ttl);
    }

    /**
     * The lease behind the current thread's hold of a key: its fencing token, its validity, its lost signal.
     *
     * @param lockKey the key
     * @return the lease, or empty when the current thread does not hold the lock
     * @throws IllegalArgumentException if the key is null, not a {@code String}, or not a valid lock name
     */
    public Optional<Lease> currentLease(Object lockKey) {
        return dlockLock(lockKey).currentLease();
    }

    /**
     * Refused: the client's watchdog renews held leases, so a renewal scheduler would renew them a second
     * time on another clock.
     *
     * @param renewalTaskScheduler ignored
     * @throws UnsupportedOperationException always
     */
    @Override
    public void setRenewalTaskScheduler(TaskScheduler renewalTaskScheduler) {
        throw new UnsupportedOperationException("DlockLockRegistry takes no renewal TaskScheduler: the LockClient's"
                + " watchdog renews every held lease (LockClient.Builder.renewal), and renewLock(key) renews now");
    }

    private dev.dlock.DistributedLock dlockLock(Object lockKey) {
        if (!(lockKey instanceof String name)) {
            throw new IllegalArgumentException("lockKey must be a String (the dlock lock name), got "
                    + (lockKey == null ? "null" : "a " + lockKey.getClass().getName()));
        }
        return client.lock(name);
    }

    @Override
    public String toString() {
        return "DlockLockRegistry[" + client + ", leaseTime=" + leaseTime + "]";
    }
}
