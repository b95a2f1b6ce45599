package dev.dlock.internal.lease;

import dev.dlock.internal.base.ListenerEvents;
import dev.dlock.internal.store.Store;

/**
 * What every lease of one client uses, wired once: one reference per lease instead of four.
 *
 * @param store renewals and releases
 * @param events listener events
 * @param watchdog renews and expires the lease
 * @param route how a hold ends (implemented above this package)
 */
public record LeaseParts(Store store, ListenerEvents events, Watchdog watchdog, HoldRoute route) {}
