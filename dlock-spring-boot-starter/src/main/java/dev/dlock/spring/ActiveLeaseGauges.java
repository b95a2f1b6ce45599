package dev.dlock.spring;

import dev.dlock.Lease;
import dev.dlock.LockClient;
import io.micrometer.core.instrument.Gauge;
import io.micrometer.core.instrument.MeterRegistry;

/**
 * The {@code dlock.leases.active} gauge, one per name pattern: how many leases this instance holds now,
 * read from {@link LockClient#heldLeases()} when the registry is scraped, so it is exact even when a
 * release fails.
 */
final class ActiveLeaseGauges {
    ActiveLeaseGauges(LockClient client, MeterRegistry registry, NamePatterns patterns) {
        for (String tag : patterns.tags()) {
            Gauge.builder("dlock.leases.active", client, c -> count(c, patterns, tag))
                    .description("Leases this instance holds now")
                    .tag("name", tag)
                    .strongReference(true)
                    .register(registry);
        }
    }

    private static double count(LockClient client, NamePatterns patterns, String tag) {
        int n = 0;
        for (Lease lease : client.heldLeases()) {
            if (patterns.tagOf(lease.name()).equals(tag)) {
                n++;
            }
        }
        return n;
    }
}
