package dev.dlock.internal.wait;

import dev.dlock.internal.base.ListenerEvents;
import dev.dlock.internal.lease.LeaseParts;
import dev.dlock.internal.lease.Watchdog;
import dev.dlock.internal.store.Store;

/**
 * The collaborators every {@link Acquisition} of one client uses, wired once by {@link Acquisitions}.
 *
 * @param leases what the leases it makes use
 * @param queues the local queues and their wake-ups
 */
record Parts(LeaseParts leases, LocalQueues queues) {
    Store store() {
        return leases.store();
    }

    ListenerEvents events() {
        return leases.events();
    }

    Watchdog watchdog() {
        return leases.watchdog();
    }
}
