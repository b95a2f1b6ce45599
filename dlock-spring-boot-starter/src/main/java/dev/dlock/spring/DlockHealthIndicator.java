package dev.dlock.spring;

import dev.dlock.LockClient;
import org.springframework.boot.health.contributor.Health;
import org.springframework.boot.health.contributor.HealthIndicator;

/**
 * Health of the lock store: UP when the store answers a {@code describe} of a probe name within the
 * client's operation timeout, DOWN with the error otherwise. Details: the store (passwords masked) and how
 * many leases this instance holds.
 *
 * <p>Failure modes: a store that does not answer makes the check DOWN after the operation timeout; the
 * check itself never throws.
 */
final class DlockHealthIndicator implements HealthIndicator {
    private final LockClient client;
    private final String store;

    DlockHealthIndicator(LockClient client, String store) {
        this.client = client;
        this.store = store;
    }

    @Override
    public Health health() {
        try {
            client.describe(DlockStore.PROBE_NAME);
            return Health.up()
                    .withDetail("store", store)
                    .withDetail("heldLeases", client.heldLeases().size())
                    .build();
        } catch (RuntimeException e) {
            return Health.down(e).withDetail("store", store).build();
        }
    }
}
