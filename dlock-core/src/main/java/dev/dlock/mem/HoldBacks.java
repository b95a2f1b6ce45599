package dev.dlock.mem;

import dev.dlock.spi.DriftMargin;
import java.util.HashMap;
import java.util.Map;
import java.util.concurrent.TimeUnit;

/**
 * Told first for the {@link MemoryStore}: what it must remember across {@link MemoryStore#forgetEverything()}
 * to hold grants back after it, per namespace.
 *
 * <p>Design: the longest lease granted or renewed in a namespace survives a loss; the loss starts a
 * hold-back in each such namespace until that long plus the {@link DriftMargin}, so every forgotten lease
 * has ended by its holder's clock before anyone else is granted. A namespace without grants before the
 * loss is not held back. Not thread-safe: every call runs under the store's lock.
 */
final class HoldBacks {
    /** Per namespace, the longest lease granted or renewed, in milliseconds. */
    private final Map<String, Long> longestLeaseMillis = new HashMap<>();
    /** Per namespace, until when grants are held back after a loss ({@code System.nanoTime()}). */
    private final Map<String, Long> heldBackUntil = new HashMap<>();

    /** A lease of this time was granted or renewed in the namespace. */
    void leased(String namespace, long leaseMillis) {
        Long longest = longestLeaseMillis.get(namespace);
        if (longest == null || longest < leaseMillis) { // no boxing on the usual path: same lease time again
            longestLeaseMillis.put(namespace, leaseMillis);
        }
    }

    /** The store lost its state at {@code nowNanos}: every namespace with leases is held back. */
    void lost(long nowNanos) {
        longestLeaseMillis.forEach((namespace, longest) -> heldBackUntil.put(
                namespace, nowNanos + TimeUnit.MILLISECONDS.toNanos(longest) + DriftMargin.nanos(longest)));
    }

    /** How long grants in a namespace are still held back, 0 when not. */
    long heldBackNanos(String namespace, long nowNanos) {
        Long until = heldBackUntil.get(namespace);
        if (until == null) {
            return 0;
        }
        if (nowNanos - until >= 0) {
            heldBackUntil.remove(namespace);
            return 0;
        }
        return until - nowNanos;
    }
}
