package dev.dlock.internal;

import dev.dlock.spi.Mode;
import java.time.Duration;

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
 * never handed out.
 *
 * <p>Queueing: the waiter that takes the hold leaves the local queue without promoting the next one (the
 * hold is still ours, a store attempt would only be refused). Every end of a hold (release to the store,
 * loss) wakes the queue, which starts a head that was left queued.
 */
final class Cohort {
    /** How long our own waiters hold back after a chain ended at its bound. */
    static final long YIELD_NANOS = java.util.concurrent.TimeUnit.MILLISECONDS.toNanos(2);

    private final Store store;
    private final LocalQueues queues;
    private final long maxPasses;
    private final long maxNanos;

    /** The client's bounds ({@code localHandoff}), the passes capped by the store's token room. */
    Cohort(Store store, LocalQueues queues, int handoffPasses, Duration handoffTime) {
        this.store = store;
        this.queues = queues;
        long room = Math.max(1, store.tokenBlock()) - 1;
        this.maxPasses = Math.min(handoffPasses, room);
        this.maxNanos = Checks.saturatedNanos(handoffTime);
    }

    /**
     * Passes a lease its holder releases to the next local waiter when the rules allow.
     *
     * @return true if the hold was passed on (the lease is released and the store was not told)
     */
    boolean pass(LeaseImpl lease) {
        if (!allowed(lease)) {
            return false;
        }
        LocalQueue queue = queues.get(lease.key);
        Acquisition first = queue == null ? null : queue.firstLive();
        if (first == null || !first.accepts(lease)) {
            return false;
        }
        LeaseImpl next = lease.passOn();
        if (next == null) {
            return false;
        }
        for (Acquisition waiter : queue.inOrder()) {
            if (!waiter.isLive()) {
                continue; // done, or its deadline passed: it must not be granted late
            }
            if (!waiter.accepts(next)) {
                break;
            }
            if (waiter.takePass(next)) {
                return true;
            }
        }
        // Nobody could take it (their waits ended meanwhile, or it was lost): back to the store.
        next.releaseToStore(0);
        return true;
    }

    /**
     * After a chain that ended at its bound, our own waiters hold back for {@link #YIELD_NANOS} before
     * they ask the store again (a wake-up from the store still reaches them at once), so that the
     * waiters of other clients, woken by the store, are not beaten by ours at every release.
     *
     * @return the delay for the local wake-up after releasing {@code lease} to the store, 0 for none
     */
    long localWakeDelayNanos(LeaseImpl lease) {
        return lease.pass > 0 && maxPasses > 0 ? YIELD_NANOS : 0;
    }

    private boolean allowed(LeaseImpl lease) {
        Mode mode = lease.key.mode();
        return (mode == Mode.EXCLUSIVE || mode == Mode.WRITE)
                && lease.renew
                && !lease.downgraded
                && lease.pass < maxPasses
                && System.nanoTime() - lease.chainStartNanos < maxNanos
                && !store.isClosed()
                && lease.isValid();
    }
}
