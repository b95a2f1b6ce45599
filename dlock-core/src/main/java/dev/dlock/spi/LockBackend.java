package dev.dlock.spi;

import dev.dlock.LockInfo;
import java.time.Duration;
import java.util.List;
import java.util.Set;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.CompletionStage;

/**
 * The atomic primitives a store implements. Everything else (thread ownership, reentrancy, waiting,
 * timeouts, the renewal scheduler, local queues, lost signals, validation) lives in the engine.
 *
 * <h2>Rules every backend follows</h2>
 *
 * <ul>
 *   <li>Every method returns at once with a stage; none blocks the caller. The engine applies the
 *       operation timeout and treats an exceptional stage as "the store failed".
 *   <li>Expiry is decided by the store's clock only; a backend never sends the client's wall clock.
 *   <li>A grant and its fencing token are made in one atomic step; tokens for one (namespace, kind,
 *       name) strictly increase across holders, expiries and deletions of the lock record.
 *   <li>An operation for an owner that no longer holds the resource is harmless (release returns false,
 *       renew reports it lost); it never touches another owner's hold.
 * </ul>
 *
 * <h2>Per mode</h2>
 *
 * <ul>
 *   <li>{@link Mode#EXCLUSIVE}: grant when nobody holds.
 *   <li>{@link Mode#FAIR}: grant when nobody holds and the caller is first among live queue entries (or
 *       the queue is empty); a waiting caller is appended to the queue, or its entry refreshed. Release
 *       wakes with the new head's owner id.
 *   <li>{@link Mode#READ}: grant when no writer holds (except {@code downgradeFrom}) and no live writer
 *       is queued (unless {@code downgradeFrom} is set).
 *   <li>{@link Mode#WRITE}: grant when nobody holds in either mode; a waiting writer records a queue
 *       entry so that new readers hold back (writers are not starved).
 *   <li>{@link Mode#PERMIT}: grant when fewer than {@code permits} live holders.
 * </ul>
 */
public interface LockBackend extends AutoCloseable {
    /**
     * Tries to take the resource once, without waiting in the store.
     *
     * @param request what to take and for how long
     * @return granted with a fencing token, or busy with a retry hint
     */
    CompletionStage<AcquireResult> acquire(AcquireRequest request);

    /**
     * Gives the resource up if {@code owner} holds it, and wakes waiters.
     *
     * @param key the resource and mode the grant was made in
     * @param owner the owner id of the grant
     * @return true if the hold existed and was removed, false if it had already expired or been taken
     */
    CompletionStage<Boolean> release(LockKey key, String owner);

    /**
     * Renews many leases, in as few round trips as the store allows (one per node).
     *
     * @param batch leases to renew
     * @return the owner ids in the batch that no longer hold their resource
     */
    CompletionStage<Set<String>> renew(List<RenewRequest> batch);

    /**
     * Whether the store holds a lease now, read after this call was made, without changing it. The engine
     * asks it before it passes a hold to another caller of this client without the store (cohort
     * hand-off), when its last word from the store is older than that caller's request: the answer
     * proves the hold was still there after the caller asked. It must answer false for a hold that a
     * release, a force-release, its expiry or a loss of the store's state ended before the read.
     *
     * <p>The default renews the lease (a write, which proves the same). A store where a read costs less
     * than a write overrides it: a database, whose every committed write waits for its log to reach the
     * disk.
     *
     * @param lease the lease, as it would be renewed
     * @return completes with true if {@code lease.owner()} holds it
     */
    default CompletionStage<Boolean> holds(RenewRequest lease) {
        return renew(List.of(lease)).thenApply(lost -> !lost.contains(lease.owner()));
    }

    /**
     * Removes a waiter's queue entry (fair lock, queued writer, or whatever entry a backend keeps for a
     * waiting caller) when it stops waiting, and wakes whoever that unblocks. The engine calls it for
     * every acquisition that sent waiting attempts ({@code queueMillis > 0}) and gave up without a
     * grant, in any mode. Backends without queue entries return a completed stage.
     *
     * @param key the resource and mode the caller waited in
     * @param owner the owner id of the waiting acquisition
     * @return completes when done
     */
    default CompletionStage<Void> cancelWait(LockKey key, String owner) {
        return CompletableFuture.completedFuture(null);
    }

    /**
     * Starts listening for wake-ups on the resource (all modes of its kind). The engine calls this at
     * most once per client and resource at a time, only while some local caller is waiting, and
     * retries the acquisition right after the stage completes, so a wake-up between the first attempt
     * and the subscription is not lost.
     *
     * @param key the resource (its mode does not matter)
     * @param listener called on every release, expiry the store notices, or queue change
     * @return the subscription, once the store will deliver wake-ups
     */
    CompletionStage<Subscription> subscribe(LockKey key, WakeListener listener);

    /**
     * Whether this backend offers a mode. The engine refuses to hand out a lock of a mode a backend does
     * not offer ({@code fairLock()}, {@code semaphore()} throw {@link UnsupportedOperationException}
     * naming the backend by its {@code toString()}), so such a backend never sees requests in it.
     * Decorating backends forward it.
     *
     * @param mode a mode
     * @return true when requests in {@code mode} are handled; every mode by default
     */
    default boolean supports(Mode mode) {
        return true;
    }

    /**
     * How many fencing tokens an exclusive, fair or write grant reserves: the store promises that every
     * later grant of the same resource (in any mode) gets a token at least this much greater than this
     * grant's. The engine uses the tokens in between for the holders it passes an exclusive or write hold
     * to without the store (cohort hand-off, see {@code LockClient.Builder.localHandoff}), at most {@code
     * tokenBlock() - 1} of them per grant. A store may so give a read taken under a write grant
     * (downgrade) the token {@code tokenBlock()} above that grant, if every later grant still gets a
     * greater one. The default, 1, reserves nothing, and the engine then never passes a hold. Decorating
     * backends forward it.
     *
     * @return at least 1
     */
    default long tokenBlock() {
        return 1;
    }

    /**
     * Whether leases of this backend can still be valid, from what the client sees locally (for
     * ZooKeeper: the session is connected and not expired). Must not block.
     *
     * @return false when every lease must be considered lost or in doubt
     */
    default boolean leasesValid() {
        return true;
    }

    /**
     * Describes one resource: its holders, their tokens and time left, and waiters where known.
     *
     * @param key the resource (its mode does not matter)
     * @return a description; empty holders when free
     */
    CompletionStage<LockInfo> describe(LockKey key);

    /**
     * Lists the held resources of one namespace whose names start with a prefix.
     *
     * @param namespace the namespace
     * @param prefix a name prefix, possibly empty
     * @return descriptions of resources that have at least one holder
     */
    CompletionStage<List<LockInfo>> list(String namespace, String prefix);

    /**
     * How long a grant asked now in a namespace would be held back because the store may have lost grants
     * whose leases are still running (a restart without persistence, a failover to a replica that missed
     * them); the same answer {@link AcquireResult#heldBack} would give, read without writing anything. The
     * default answers zero: right for a store that never loses a committed grant. A store that can lose
     * grants overrides it, or fails the stage with {@link UnsupportedOperationException} where the
     * hold-back is not one per namespace (it says what to ask instead).
     *
     * @param namespace the namespace
     * @return the time left, zero when grants are not held back
     */
    default CompletionStage<Duration> heldBack(String namespace) {
        return CompletableFuture.completedFuture(Duration.ZERO);
    }

    /**
     * Administrative: removes every hold and queue entry of a resource, whoever owns them, and wakes
     * waiters. Fencing tokens are kept.
     *
     * @param key the resource (its mode does not matter)
     * @return true if anything was removed
     */
    CompletionStage<Boolean> forceRelease(LockKey key);

    /** Closes connections and threads. Holds are released by the engine before this is called. */
    @Override
    void close();

    /** A live wake-up subscription. */
    interface Subscription {
        /** Stops delivery; idempotent. */
        void cancel();
    }
}
