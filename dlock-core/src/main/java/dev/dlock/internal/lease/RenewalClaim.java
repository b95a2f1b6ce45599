package dev.dlock.internal.lease;

import java.util.concurrent.CompletableFuture;

/**
 * The right to send a renewal of one lease. At most one renewal of a lease is at the store at a time, so
 * the store's expiry is always the one the last answered request set, which is the one the local
 * deadline is computed from (two overlapping renewals may reach the store in either order).
 *
 * <p>Who claims it: the watchdog's batch, an {@code extend}, and a release that confirms a hold before
 * passing it on. A lease passed on keeps its claim for good ({@link #keepForGood}), so nothing renews the
 * old lease object any more.
 *
 * <p>Concurrency: the claim changes under this object's monitor; {@link #isTaken()} reads it without.
 */
public final class RenewalClaim {
    /** Completes when the renewal in flight ends; null when nobody holds the claim. */
    private volatile CompletableFuture<Void> inFlight;

    RenewalClaim() {}

    /**
     * Claims the right to send a renewal.
     *
     * @return false if a renewal is in flight
     */
    public synchronized boolean start() {
        if (inFlight != null) {
            return false;
        }
        inFlight = new CompletableFuture<>();
        return true;
    }

    /** Ends the renewal claimed by {@link #start()}, after its answer was applied. */
    public void end() {
        CompletableFuture<Void> done;
        synchronized (this) {
            done = inFlight;
            inFlight = null;
        }
        if (done != null) {
            done.complete(null);
        }
    }

    /** Whether a renewal is at the store (the watchdog leaves the lease alone meanwhile). */
    boolean isTaken() {
        return inFlight != null;
    }

    /** The renewal in flight, to wait for; null when none. */
    synchronized CompletableFuture<Void> inFlight() {
        return inFlight;
    }

    /**
     * The lease was passed on while its claim is held: the claim stays taken, so that {@link #start()}
     * fails from now on, and whoever waits for it wakes.
     */
    void keepForGood() {
        CompletableFuture<Void> claim;
        synchronized (this) {
            claim = inFlight;
        }
        claim.complete(null);
    }
}
