package dev.dlock.spi;

import java.util.Objects;

/**
 * One lease in a renewal batch: set its time to live to {@code leaseMillis} if {@code owner} still
 * holds {@code key}.
 *
 * @param key the resource and the holder's mode
 * @param owner the owner id the grant was made to
 * @param leaseMillis the new time to live, by the store's clock
 */
public record RenewRequest(LockKey key, String owner, long leaseMillis) {
    /**
     * Checks that nothing is null and the lease is positive.
     *
     * @param key as described on the record
     * @param owner as described on the record
     * @param leaseMillis as described on the record
     */
    public RenewRequest {
        Objects.requireNonNull(key, "key");
        Objects.requireNonNull(owner, "owner");
        if (leaseMillis <= 0) {
            throw new IllegalArgumentException("leaseMillis must be positive");
        }
    }
}
