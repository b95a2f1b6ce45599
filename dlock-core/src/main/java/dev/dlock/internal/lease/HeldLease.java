package dev.dlock.internal.lease;

import dev.dlock.Lease;

/** A lease as the engine sees it: it can tell at once, on the calling thread, whether it was lost. */
public interface HeldLease extends Lease {
    /**
     * Why the lease was lost, exact at once (unlike {@link #whenLost()}, which completes on another
     * thread).
     *
     * @return the reason, or null when not lost (held or released normally)
     */
    String lostReason();

    /**
     * Records the thread whose {@code Lock} view holds the lease (null when it lets go), so that a lease
     * held by a thread that died is released instead of being renewed forever.
     *
     * @param thread the holding thread, or null
     */
    void ownedBy(Thread thread);
}
