package dev.dlock.internal.wait;

import dev.dlock.LockException;
import dev.dlock.internal.base.Checks;
import dev.dlock.internal.base.ListenerEvents;
import dev.dlock.internal.lease.LeaseParts;
import dev.dlock.internal.lease.Terms;
import dev.dlock.internal.lease.Watchdog;
import dev.dlock.internal.store.Store;
import dev.dlock.spi.LockKey;
import java.time.Duration;
import java.util.Set;

/**
 * The waiting side of one client, and its one door: starts every {@link Acquisition}, keeps the local
 * queues ({@link LocalQueues}) and the hand-off between their callers ({@link Cohort}), and draws the
 * owner ids the store tells holds apart by.
 *
 * <p>Design: the lock views above this package start waits here and get nothing else of the engine;
 * the leases below it reach the hand-off only through {@link dev.dlock.internal.lease.HoldRoute}, which
 * the {@link Cohort} made here implements.
 */
public final class Acquisitions {
    private final Store store;
    private final LocalQueues queues;
    private final Cohort cohort;
    private final Parts parts;
    /** Draws the owner ids, {@code pid@host#<128 random bits>}. */
    private final OwnerIds owners = new OwnerIds();

    /**
     * The waiting side of a client whose store is open.
     *
     * @param store the store route
     * @param events listener events
     * @param watchdog watches the leases handed out
     * @param localQueueLimit how many local callers may wait for one name
     * @param handoffPasses how many times in a row a hold may pass between local callers
     * @param handoffTime how long a chain of passes may last from its store grant
     */
    public Acquisitions(
            Store store,
            ListenerEvents events,
            Watchdog watchdog,
            int localQueueLimit,
            int handoffPasses,
            Duration handoffTime) {
        this.store = store;
        this.queues = new LocalQueues(localQueueLimit, events, store);
        this.cohort = new Cohort(store, events, queues, handoffPasses, handoffTime);
        this.parts = new Parts(new LeaseParts(store, events, watchdog, cohort), queues);
    }

    /**
     * Starts an acquisition on a view's terms; its result completes with the lease or the failure.
     *
     * @param terms what the view asks the store for
     * @param wait the longest wait, zero for one attempt
     * @param downgradeFrom the owner of this thread's write hold when it takes the read lock, else null
     * @return the acquisition, started
     * @throws LockException if the client is closed
     */
    public Acquisition start(Terms terms, Duration wait, String downgradeFrom) {
        Checks.nonNegative(wait, "wait");
        if (store.isClosed()) {
            throw new LockException("the LockClient is closed");
        }
        Acquisition acquisition = new Acquisition(parts, terms, owners, Checks.saturatedNanos(wait), downgradeFrom);
        queues.enqueue(acquisition);
        return acquisition;
    }

    /**
     * Closing: waits until no release runs in the hand-off any more, at most until {@code untilNanos};
     * called once the client is marked closing, after which releases only give back to the store.
     *
     * @param untilNanos a deadline on the client's clock ({@link #nanoTime()})
     */
    public void awaitReleases(long untilNanos) {
        cohort.awaitReleases(untilNanos);
    }

    /**
     * Closing: fails every waiter.
     *
     * @param cause the failure each waiter gets
     */
    public void failAll(LockException cause) {
        queues.failAll(cause);
    }

    /** Closing: cancels every wake-up subscription. */
    public void closeSubscriptions() {
        queues.closeSubscriptions();
    }

    /** {@return now on the client's clock ({@link Store#nanoTime})} */
    public long nanoTime() {
        return store.nanoTime();
    }

    /** {@return whether no caller of this client waits (for tests: nothing is left behind)} */
    public boolean noneWaiting() {
        return queues.isEmpty();
    }

    /** {@return the keys callers wait for, in the order {@link #failAll} visits them (for tests of close)} */
    public Set<LockKey> waitingKeys() {
        return queues.waitingKeys();
    }
}
