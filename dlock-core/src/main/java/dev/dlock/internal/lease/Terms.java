package dev.dlock.internal.lease;

import dev.dlock.spi.LockKey;

/**
 * What a lock view asks the store for on every acquisition: made once per view, so an acquisition
 * carries one reference instead of the view's fields.
 *
 * @param key the resource and mode
 * @param leaseMillis the lease time of a grant
 * @param renew whether the watchdog renews the lease
 * @param permits the semaphore's permits, 1 for locks
 */
public record Terms(LockKey key, long leaseMillis, boolean renew, int permits) {}
