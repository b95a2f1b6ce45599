package dev.dlock.internal.wait;

import dev.dlock.internal.base.Checks;
import dev.dlock.internal.base.ListenerEvents;
import dev.dlock.internal.lease.HoldRoute;
import dev.dlock.internal.lease.LeaseImpl;
import dev.dlock.internal.store.Store;
import dev.dlock.spi.LockKey;
import dev.dlock.spi.Mode;
import dev.dlock.spi.RenewRequest;
import java.time.Duration;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.atomic.AtomicInteger;

/**
 * Cohort hand-off: a hold released by one caller of this client passes to the next caller of this client
 * waiting for the same name, without a store round trip, a bounded number of times in a row (lock
 * cohorting, Dice, Marathe and Shavit, PPoPP 2012: the store is the global lock, the {@link LocalQueue}
 * the cohort).
 *
 * <p>Tokens: every holder gets its own {@link LeaseImpl} whose fencing token is its predecessor's plus 1.
 * This needs room between store grants, which the store promises with {@code LockBackend.tokenBlock()}:
 * its next grant of the name is at least that much above this one's token. A chain therefore has at most
 * {@code tokenBlock() - 1} passes, and a store without room (the default 1) never passes. The engine does
 * not scale store tokens itself ({@code storeToken * K + pass}): a store's token is what its docs say and
 * what {@code describe} shows, so scaling belongs to the store (the ZooKeeper and etcd backends scale their
 * transaction ids and document the scaled value; Redis and JDBC step a counter by the block).
 *
 * <p>What passes: exclusive and write holds with renewal, to a waiter asking for the same lease time and
 * renewal, whose wait has not ended; never a write hold under which its thread took the read lock (a
 * downgrade: that read still counts at the store, and the next local writer would write beside it).
 * Fair locks never pass: a remote caller queued earlier in the store must go first. Reads and permits
 * are shared and need no hand-off. A chain ends, and the hold goes back to the store, after {@code
 * localHandoff} passes or time since the store grant, so that other clients get their turn; when the
 * first live waiter cannot take it; when the lease is no longer valid or a renewal of it is at the store;
 * when the client is closing.
 *
 * <p>Renewal: the store hold keeps its owner id and expiry; the new lease takes over its timing and the
 * watchdog renews it from then on ({@link LeaseImpl#passOn}). A loss of the hold reported to an earlier
 * link of the chain is forwarded to the current holder, and a lease lost before a waiter takes it is
 * never handed out; every link learns of the loss ({@link HoldChain}).
 *
 * <p>Confirmation: the local view of a hold is only as fresh as the store's last word on it (its grant, a
 * renewal or a confirmation; the store may have taken the hold back since, by an operator's
 * force-release or a loss of its state, and granted it to another client). A hold passes without the
 * store only to a waiter that asked before the request of that word was sent, and within {@link
 * #FRESH_NANOS} (or the chain bound, if shorter) of it, or right after a confirmation made for this
 * pass. Otherwise the releasing holder first asks the store whether it still holds the hold ({@code
 * LockBackend.holds}: one round trip, a read where the store offers one, else a renewal) and passes only
 * if it does; if it does not, the hold is lost and every link of the chain is told. So a caller that asks
 * after the store took the hold back never gets it passed: the confirmation its pass needs comes after
 * that and is refused. Under contention this costs one round trip per round of the local queue (each
 * thread that comes back asks after the last confirmation), not one per pass; on a database the read
 * spares that round trip a commit, which waits for the log to reach the disk.
 *
 * <p>Closing: a release running here is counted ({@link #inFlight}); the client's close waits for those
 * to finish before it releases the held leases ({@link #awaitReleases}), so a hold passed while the
 * client closes is either among them or was sent back to the store, in view of the close.
 *
 * <p>Queueing: the waiter that takes the hold leaves the local queue without promoting the next one (the
 * hold is still ours, a store attempt would only be refused). Every end of a hold (release to the store,
 * loss) wakes the queue, which starts a head that was left queued.
 */
final class Cohort implements HoldRoute {
    /** How long our own waiters hold back after a chain ended at its bound. */
    static final long YIELD_NANOS = TimeUnit.MILLISECONDS.toNanos(2);
    /** How long after the store's last confirmation of a hold it may pass without a new one. */
    static final long FRESH_NANOS = TimeUnit.MILLISECONDS.toNanos(50);

    private final Store store;
    private final ListenerEvents events;
    private final LocalQueues queues;
    private final long maxPasses;
    private final long maxNanos;
    private final long freshNanos;
    /** Releases running in {@link #release}, synchronously (see "Closing" above). */
    private final AtomicInteger inFlight = new AtomicInteger();

    /** The client's bounds ({@code localHandoff}), the passes capped by the store's token room. */
    Cohort(Store store, ListenerEvents events, LocalQueues queues, int handoffPasses, Duration handoffTime) {
        this.store = store;
        this.events = events;
        this.queues = queues;
        long room = Math.max(1, store.tokenBlock()) - 1;
        this.maxPasses = Math.min(handoffPasses, room);
        this.maxNanos = Checks.saturatedNanos(handoffTime);
        this.freshNanos = Math.min(maxNanos, FRESH_NANOS);
    }

    /**
     * Releases a lease: passes its hold to the next local waiter when the rules allow (after confirming
     * it with the store when the local view is not fresh enough), else gives it back to the store.
     *
     * @return true once passed or released, false if the store no longer held it; null if the lease was
     *     not held
     */
    @Override
    public CompletableFuture<Boolean> release(LeaseImpl lease) {
        inFlight.incrementAndGet();
        try {
            Acquisition first = store.isClosed() ? null : firstTaker(lease);
            if (first == null) {
                return releaseToStore(lease, localWakeDelayNanos(lease));
            }
            if (fresh(lease, first, true)) {
                return passOrRelease(lease, false);
            }
            if (!lease.renewal().start()) {
                return releaseToStore(lease, localWakeDelayNanos(lease)); // a renewal is at the store
            }
            long sent = store.nanoTime();
            RenewRequest confirm = new RenewRequest(lease.key(), lease.owner(), lease.leaseMillis());
            CompletableFuture<CompletableFuture<Boolean>> then = new CompletableFuture<>();
            store.holds(confirm, (held, error) -> {
                try {
                    then.complete(afterConfirmation(lease, sent, held, error));
                } catch (RuntimeException e) {
                    then.completeExceptionally(e);
                }
            });
            return then.thenCompose(release -> release);
        } finally {
            inFlight.decrementAndGet();
        }
    }

    /** The store answered the confirmation of a hold about to pass; this holds the lease's renewal claim. */
    private CompletableFuture<Boolean> afterConfirmation(
            LeaseImpl lease, long sentNanos, Boolean held, Throwable error) {
        inFlight.incrementAndGet();
        try {
            if (error == null && !held) {
                lease.renewal().end();
                lease.markLost("the store no longer held it when its release confirmed it before passing it on");
                return CompletableFuture.completedFuture(false);
            }
            if (error == null) {
                lease.shownHeld(sentNanos);
                Acquisition first = store.isClosed() ? null : firstTaker(lease);
                if (first != null && fresh(lease, first, false)) {
                    return passOrRelease(lease, true);
                }
            }
            lease.renewal().end(); // refused by the store's timeout, or nobody left to take it: back to the store
            CompletableFuture<Boolean> release = releaseToStore(lease, localWakeDelayNanos(lease));
            return release != null ? release : CompletableFuture.completedFuture(true); // released meanwhile
        } finally {
            inFlight.decrementAndGet();
        }
    }

    /**
     * Passes the hold to the first live waiter that takes it, else gives it back to the store.
     *
     * @param claimed whether the caller holds the lease's renewal claim, taken for the confirmation just
     *     answered
     */
    private CompletableFuture<Boolean> passOrRelease(LeaseImpl lease, boolean claimed) {
        Iterable<Acquisition> waiters = queues.inOrder(lease.key());
        LeaseImpl next = waiters == null ? null : lease.passOn(claimed);
        if (next == null) {
            if (claimed) {
                lease.renewal().end();
            }
            CompletableFuture<Boolean> release = releaseToStore(lease, localWakeDelayNanos(lease));
            return release != null || !claimed ? release : CompletableFuture.completedFuture(true);
        }
        for (Acquisition waiter : waiters) {
            if (!waiter.isLive()) {
                continue; // done, or its deadline passed: it must not be granted late
            }
            if (!waiter.accepts(next) || !fresh(next, waiter, !claimed)) {
                break;
            }
            if (waiter.takePass(next)) {
                return CompletableFuture.completedFuture(true);
            }
        }
        // Nobody could take it (their waits ended meanwhile, or it was lost): back to the store.
        releaseToStore(next, 0);
        return CompletableFuture.completedFuture(true);
    }

    /**
     * Gives a hold back to the store, without trying to pass it on; null if the lease was not held. When
     * the store says it no longer held it, the lease counts as lost. Local waiters try again once the
     * store answered (an unconfirmed release is retried in the background, {@link #retryRelease}).
     *
     * @param localWakeDelayNanos how long our own waiters hold back after the release (the store's
     *     wake-up still reaches them), so that other clients' waiters get their turn; 0 for none
     */
    private CompletableFuture<Boolean> releaseToStore(LeaseImpl lease, long localWakeDelayNanos) {
        if (!lease.stopHolding()) {
            return null;
        }
        long held = lease.heldForNanos();
        LockKey key = lease.key();
        if (localWakeDelayNanos != 0) {
            // Before the release: a store may deliver its wake-up while the release is on its way.
            queues.holdBack(key, store.nanoTime() + localWakeDelayNanos);
        }
        return store.release(key, lease.owner(), "", (wasHeld, error) -> {
            lease.releaseAnswered(error != null || wasHeld);
            if (error == null && wasHeld) {
                events.released(key.name(), held);
            } else if (error != null) {
                retryRelease(lease);
            }
            if (localWakeDelayNanos == 0) {
                queues.wake(key, null);
            } else {
                store.schedule(() -> queues.wake(key, null), localWakeDelayNanos);
            }
        });
    }

    /**
     * A release the store did not confirm is retried in the background until the store answers it (held
     * or not) or the client closes ({@link Store#releaseUntilAnswered}): a store whose hold is bound to a
     * session keeps it as long as that lives. Local waiters try again once it is answered.
     */
    private void retryRelease(LeaseImpl lease) {
        LockKey key = lease.key();
        store.releaseUntilAnswered(key, lease.owner(), lease.leaseMillis(), () -> queues.wake(key, null));
    }

    @Override
    public void ended(LockKey key) {
        queues.wake(key, null);
    }

    /**
     * After a chain that ended at its bound, our own waiters hold back for {@link #YIELD_NANOS} before
     * they ask the store again (a wake-up from the store still reaches them at once), so that the
     * waiters of other clients, woken by the store, are not beaten by ours at every release.
     *
     * @return the delay for the local wake-up after releasing {@code lease} to the store, 0 for none
     */
    long localWakeDelayNanos(LeaseImpl lease) {
        return lease.pass() > 0 && maxPasses > 0 ? YIELD_NANOS : 0;
    }

    /**
     * Waits until no release runs here any more, at most until {@code untilNanos}; called once the
     * client is marked closing, after which new ones only give back to the store.
     */
    void awaitReleases(long untilNanos) {
        while (inFlight.get() > 0 && store.nanoTime() - untilNanos < 0) {
            Thread.onSpinWait();
            Thread.yield();
        }
    }

    /** The first live waiter if the rules allow passing {@code lease} and it suits it, else null. */
    private Acquisition firstTaker(LeaseImpl lease) {
        if (!allowed(lease)) {
            return null;
        }
        Acquisition first = queues.firstLive(lease.key());
        return first != null && first.accepts(lease) ? first : null;
    }

    /**
     * Whether the store's last confirmation of the hold was sent after the waiter asked and, unless it
     * was just answered for this pass (its round trip is the window then), recently.
     */
    private boolean fresh(LeaseImpl lease, Acquisition waiter, boolean checkAge) {
        long confirmed = lease.confirmedNanos();
        return waiter.askedNanos() - confirmed < 0 && (!checkAge || store.nanoTime() - confirmed < freshNanos);
    }

    private boolean allowed(LeaseImpl lease) {
        Mode mode = lease.key().mode();
        return (mode == Mode.EXCLUSIVE || mode == Mode.WRITE)
                && lease.renews()
                && !lease.isDowngraded()
                && lease.pass() < maxPasses
                && store.nanoTime() - lease.chainStartNanos() < maxNanos
                && lease.isValid();
    }
}
