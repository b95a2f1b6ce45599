package dev.dlock;

import java.time.Duration;
import java.util.Optional;
import java.util.concurrent.CompletableFuture;

/**
 * At most {@link #permits()} holders at once across all clients. Each permit is its own {@link Lease},
 * with its own renewal and fencing token, so a crashed holder's permit returns after its lease time.
 *
 * <p>Every client must use the same number of permits for a name; the store checks the count each
 * caller passes.
 */
public interface DistributedSemaphore {
    /**
     * The semaphore name.
     *
     * @return the name
     */
    String name();

    /**
     * How many holders the semaphore admits.
     *
     * @return the permit count
     */
    int permits();

    /**
     * Waits up to {@code wait} for a permit.
     *
     * @param wait the longest time to wait
     * @return the permit's lease
     * @throws LockTimeoutException if the wait ran out
     * @throws LockBackendException if the store failed or did not answer in time
     */
    Lease acquire(Duration wait);

    /**
     * Takes a permit if one is free now.
     *
     * @return the lease, or empty when none is free
     */
    Optional<Lease> tryAcquire();

    /**
     * Waits for a permit without blocking the caller; cancelling leaves no holder behind.
     *
     * @param wait the longest time to wait
     * @return completes with the permit's lease
     */
    CompletableFuture<Lease> acquireAsync(Duration wait);
}
