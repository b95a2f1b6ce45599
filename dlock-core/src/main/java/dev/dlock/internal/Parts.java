package dev.dlock.internal;

/**
 * The collaborators every {@link Acquisition} and {@link LeaseImpl} of one client uses, wired once by
 * {@link Engine}. Narrower than the engine: no options, no lock views, no closing; one reference per
 * acquisition and lease instead of five.
 *
 * @param store every store call and timer
 * @param events listener events
 * @param queues the local queues and their wake-ups
 * @param watchdog renews and expires held leases
 * @param cohort passes holds between callers of this client
 */
record Parts(Store store, ListenerEvents events, LocalQueues queues, Watchdog watchdog, Cohort cohort) {}
