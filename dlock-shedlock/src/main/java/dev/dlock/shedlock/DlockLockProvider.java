package dev.dlock.shedlock;

import dev.dlock.DistributedLock;
import dev.dlock.Lease;
import dev.dlock.LeaseLostException;
import dev.dlock.LockClient;
import java.time.Duration;
import java.util.Objects;
import java.util.Optional;
import net.javacrumbs.shedlock.core.ExtensibleLockProvider;
import net.javacrumbs.shedlock.core.LockConfiguration;
import net.javacrumbs.shedlock.core.SimpleLock;

/**
 * A ShedLock {@link net.javacrumbs.shedlock.core.LockProvider} backed by a dlock {@link LockClient}: jobs
 * annotated with {@code @SchedulerLock} (or run through a {@code LockingTaskExecutor}) keep their code and
 * run on any dlock store, with a fencing token per run and a lease that tells when it is lost.
 *
 * <h2>Use</h2>
 *
 * <pre>{@code
 * @Bean
 * LockProvider lockProvider(LockClient dlock) {
 *     return DlockLockProvider.of(dlock);
 * }
 * }</pre>
 *
 * <h2>What the ShedLock settings mean here</h2>
 *
 * <ul>
 *   <li>{@code lockAtMostFor} is the lease time of the grant, and the lease is not renewed: the store frees
 *       the lock after that time even if the job still runs or its process died. A job that outlives it
 *       sees {@link Lease#isValid()} turn false (through {@link DlockLockAssert#currentLease()}) and its
 *       {@link SimpleLock#unlock()} throws {@link dev.dlock.LeaseLostException}. A {@code lockAtMostFor}
 *       under a second is asked for as one second (a shorter lease could run out before a loaded store's
 *       answer arrives) and cut to what is left of it at once, to no less than 50 ms; {@link
 *       SimpleLock#extend} treats the lock as expired once {@code lockAtMostFor} has passed.
 *   <li>{@code lockAtLeastFor}: a job that ends sooner leaves the lock held until that long after the
 *       lock was granted. No thread waits for it: {@code unlock()} shortens the lease to the time left,
 *       and the store (or, for session stores, the client's watchdog) lets it go then. Such a lease counts
 *       as lost for the client's {@link dev.dlock.LockListener} when it runs out.
 *   <li>{@link #lock} never waits: it asks the store once ({@link DistributedLock#tryAcquire()}) and
 *       answers empty when another holder has the name, in this process or another.
 *   <li>Both times are measured with this process's monotonic clock from the call, not from the
 *       configuration's wall-clock creation time; expiry itself is the store's clock.
 * </ul>
 *
 * <p>The lock name is ShedLock's name, used as a dlock name in the client's namespace; the client is the
 * caller's to close. Safe for use by many threads.
 */
public final class DlockLockProvider implements ExtensibleLockProvider {
    private final LockClient client;

    private DlockLockProvider(LockClient client) {
        this.client = client;
    }

    /**
     * A provider taking its locks from a client.
     *
     * @param client a connected client; closing it releases every lock the provider holds
     * @return the provider
     * @throws NullPointerException if the client is null
     */
    public static DlockLockProvider of(LockClient client) {
        Objects.requireNonNull(client, "client must not be null");
        return new DlockLockProvider(client);
    }

    /**
     * Takes the lock if no one holds it, after one round trip to the store.
     *
     * @param lockConfiguration the name, {@code lockAtMostFor} (at most 365 days) and {@code lockAtLeastFor}
     * @return the held lock, or empty when someone holds it (or, for a {@code lockAtMostFor} under a
     *     second, when the grant came too late to cut it to that time)
     * @throws IllegalArgumentException for a name dlock does not accept or a {@code lockAtMostFor} longer
     *     than 365 days
     * @throws dev.dlock.LockBackendException if the store failed or did not answer in time
     */
    @Override
    public Optional<SimpleLock> lock(LockConfiguration lockConfiguration) {
        Objects.requireNonNull(lockConfiguration, "lockConfiguration must not be null");
        Duration atMost = lockConfiguration.getLockAtMostFor();
        Duration atLeast = lockConfiguration.getLockAtLeastFor();
        DistributedLock lock = client.lock(lockConfiguration.getName())
                .withLeaseTime(HeldLock.grantLeaseTime(atMost))
                .withRenewal(false);
        long sentNanos = System.nanoTime();
        Optional<Lease> granted = lock.tryAcquire();
        if (granted.isEmpty()) {
            return Optional.empty();
        }
        Lease lease = granted.get();
        Optional<Duration> shortened = HeldLock.shortened(atMost, sentNanos);
        if (shortened.isPresent()) {
            try {
                lease.extend(shortened.get());
            } catch (LeaseLostException e) {
                return Optional.empty(); // ran out before the store confirmed the shorter time (see HeldLock)
            } catch (RuntimeException e) {
                lease.close();
                throw e;
            }
        }
        Duration leaseTime = shortened.orElse(HeldLock.grantLeaseTime(atMost));
        HeldLock held = new HeldLock(lease, sentNanos, System.nanoTime(), leaseTime, atMost, atLeast);
        DlockLockAssert.held(held);
        return Optional.of(held);
    }

    @Override
    public String toString() {
        return "DlockLockProvider[" + client + "]";
    }
}
