package dev.dlock.spi;

/**
 * A capability of stores whose leases are one client session rather than a time to live per hold
 * (ZooKeeper's ephemeral nodes; later an etcd lease shared by every key of a client). Such a store never
 * expires a hold on its own while the session lives, and it knows better than anyone until when the
 * session is certainly kept.
 *
 * <p>A backend of such a store hands this to the engine once, while it opens, through {@link
 * BackendContext.BackendEvents#leasesAreSession}. The engine's watchdog stays the only clock that
 * decides a lease's deadline, and uses it so:
 *
 * <ul>
 *   <li>Session expiry: when {@link #liveUntilNanos()} passes without moving on, every lease is lost
 *       (the watchdog looks again at that point, whatever the leases' own deadlines).
 *   <li>Lease time: a lease whose own deadline passes (renewal switched off, or every renewal failed) is
 *       declared lost and, since the store would keep it for as long as the session lives, released at
 *       the store by the engine.
 *   <li>Session health: {@link LockBackend#leasesValid()} answers from the same session;
 *       {@link BackendContext.BackendEvents#allLeasesLost} reports a session that is gone at once.
 * </ul>
 *
 * <p>{@link LockBackend#renew} still reports holds the store lost (for example removed by {@code
 * forceRelease}); a session store may answer it without a round trip.
 */
public interface SessionLeases {
    /**
     * Until when the store is certain to keep this client's session, counted from its last reply.
     * Called by the watchdog on its own thread at every tick; must not block.
     *
     * @return a {@code System.nanoTime()} value; one not after now when the session is not live (lost,
     *     replaced, or without a reply for too long)
     */
    long liveUntilNanos();

    /**
     * Why the session is not live, in the words of the store; the lost leases' messages carry it.
     *
     * @return a short human-readable cause
     */
    default String notLiveReason() {
        return "the store session is not live";
    }
}
