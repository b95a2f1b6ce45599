package dev.dlock.internal.wait;

import dev.dlock.LockException;
import dev.dlock.internal.lease.LeaseImpl;
import dev.dlock.internal.lease.Terms;
import dev.dlock.internal.store.NotSent;
import dev.dlock.internal.store.Store;
import dev.dlock.internal.store.StoreCalls;
import dev.dlock.spi.AcquireRequest;
import dev.dlock.spi.AcquireResult;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.ScheduledFuture;
import java.util.concurrent.TimeUnit;
import java.util.function.Supplier;

/**
 * One caller's wait for one resource, driven by store answers, wake-ups and timers: what it does on each
 * transition of its state machine ({@link WaitState}, the superclass: QUEUED, IN_FLIGHT, PAUSED, DONE).
 *
 * <p>Waiting without polling: after the first busy answer the head subscribes to wake-ups and tries again
 * once the subscription is live. Later tries happen on a wake-up, or at the latest when the holder's
 * lease would run out (the store's hint), or, when the caller holds a queue entry in the store (fair lock,
 * queued writer), at a third of that entry's life to refresh it.
 *
 * <p>What it sends, under which owner id, and when it asks again at the latest: {@link WaitRequest}.
 *
 * <p>Failure modes: a grant that arrives after the caller gave up (timeout, cancel, close), after the
 * operation timeout ended the attempt, or after the caller took a hold passed by another local caller
 * ({@link Cohort}; the attempt was on its way and reached a store the chain had left meanwhile), is
 * released at once, so nothing is left held; a waiting caller that gives up removes its store queue entry.
 * Give-backs and queue exits are retried until the store answers them or the client closes, as releases
 * are ({@link Store#releaseUntilAnswered}): on a store that binds them to a session, one lost at a bad
 * moment would otherwise stay as long as the session. A wake-up subscription the store refuses while it
 * answers calls (a Redis client whose notification connection is not back yet after a restart) does not
 * end the wait: it asks again every 100 ms and subscribes again at its next busy answer; a subscription the
 * store does not answer within the operation timeout fails the wait, as any unanswered call does.
 */
public final class Acquisition extends WaitState {
    /** How soon a wait whose wake-up subscription was refused asks the store again. */
    private static final long POLL_WITHOUT_WAKE_UPS_NANOS = TimeUnit.MILLISECONDS.toNanos(100);

    private final Parts parts;
    private final Terms terms;

    private final String downgradeFrom;
    private final WaitRequest request;

    /**
     * A wait, not started yet ({@link LocalQueues#enqueue} starts it).
     *
     * @param owners draws owner ids: one for the first attempt, a fresh one for a retry after a give-back
     * @param downgradeFrom the owner of this thread's write hold when it takes the read lock, else null
     */
    Acquisition(Parts parts, Terms terms, Supplier<String> owners, long waitNanos, String downgradeFrom) {
        super(parts.events(), terms.key(), waitNanos, parts.store().nanoTime());
        this.parts = parts;
        this.terms = terms;
        this.downgradeFrom = downgradeFrom;
        this.request = new WaitRequest(terms, owners, waitNanos, downgradeFrom);
    }

    /** The owner id of the current attempt. */
    String owner() {
        return request.current().owner();
    }

    /**
     * The outcome of the wait.
     *
     * @return completes with the lease, or the failure (timeout, store failure, client closed)
     */
    public CompletableFuture<LeaseImpl> result() {
        return future();
    }

    /** Cancels the wait; a lease granted meanwhile is released. */
    public void cancel() {
        future().cancel(false);
    }

    /**
     * Entered the local queue: a timed wait ends at its deadline in every state, even while a store call
     * or a subscription is on its way (a late answer is undone). A zero wait behind another local caller
     * fails at once; as head it makes one attempt, bounded by the operation timeout.
     */
    void armDeadline(boolean head) {
        if (waitNanos == 0) {
            if (!head) {
                fail(timeout(""));
            }
            return;
        }
        if (deadlineNanos == Long.MAX_VALUE) {
            return;
        }
        ScheduledFuture<?> t = parts.store()
                .schedule(
                        () -> fail(deadlinePassed()),
                        deadlineNanos - parts.store().nanoTime());
        if (t != null) {
            keepDeadlineTimer(t);
        }
    }

    @Override
    ScheduledFuture<?> scheduleWake(long delayNanos) {
        return parts.store().schedule(() -> wake(true), delayNanos);
    }

    /**
     * Now first among local callers: start asking the store. A caller already asking was the head before a
     * downgrade went in front of it ({@link LocalQueues#enqueue}); wake-ups went to that one meanwhile, so
     * it asks again now.
     */
    void becomeHead() {
        if (parts.store().isClosed()) {
            fail(new LockException("the LockClient was closed while waiting"));
            return;
        }
        if (startAsking()) {
            attempt();
        } else {
            wake(false);
        }
    }

    @Override
    long nanoTime() {
        return parts.store().nanoTime();
    }

    /** Whether this is a downgrade: the read lock taken by the thread that holds the write lock. */
    boolean isDowngrade() {
        return downgradeFrom != null;
    }

    /**
     * The resource may be free: retry now, or right after the attempt in flight. A head left queued
     * while a hold passed between local callers ({@link Cohort}) starts now, unless held back.
     *
     * @param startQueued false to leave a queued head queued (held back after a chain of passes)
     */
    void wake(boolean startQueued) {
        switch (afterWake(startQueued)) {
            case START -> becomeHead();
            case ATTEMPT -> attempt();
            case NONE -> {}
        }
    }

    /** Whether a hold passed by another local caller suits this wait ({@link Cohort}). */
    boolean accepts(LeaseImpl lease) {
        return terms.permits() == 1
                && downgradeFrom == null
                && terms.renew() == lease.renews()
                && terms.leaseMillis() == lease.leaseMillis();
    }

    /** When this caller asked: a hold passes to it without the store only if confirmed since ({@link Cohort}). */
    long askedNanos() {
        return startNanos();
    }

    /**
     * Takes a hold passed by another local caller ({@link Cohort}) if the wait goes on and the lease is
     * still valid; an attempt of ours still at the store is undone when its answer arrives.
     *
     * @return false if the wait ended (or its deadline passed) or the lease is not valid
     */
    boolean takePass(LeaseImpl lease) {
        if (parts.store().nanoTime() - deadlineNanos >= 0 || !lease.isValid() || !finish()) {
            return false;
        }
        deliver(lease, false);
        return true;
    }

    private void attempt() {
        long sentNanos = parts.store().nanoTime();
        AcquireRequest sent = request.current();
        parts.store().acquire(sent, (answer, error) -> onAnswer(sent, answer, error, sentNanos));
    }

    private void onAnswer(AcquireRequest sent, AcquireResult answer, Throwable error, long sentNanos) {
        if (error instanceof NotSent) {
            // The client is closing (close() fails this wait too): the attempt never reached the store.
            fail(new LockException("the LockClient was closed while waiting"));
            return;
        }
        if (error != null) {
            // The store may have granted or queued us although the answer failed: undo both.
            parts.store().giveBack(key, sent.owner(), " after a failed acquire", sent.leaseMillis());
            if (!fail(StoreCalls.storeFailure("acquire '" + key.name() + "'", error)) && sent.waiting()) {
                parts.store().leaveQueue(key, sent.owner(), sent.leaseMillis());
            }
            return;
        }
        if (answer.isGranted()) {
            granted(sent.owner(), answer.token(), sentNanos);
            return;
        }
        if (answer.isHeldBack()) {
            heldBack(answer.retryAfterMillis());
        }
        long now = parts.store().nanoTime();
        switch (afterBusy(now, request.retryDelayNanos(answer, now, deadlineNanos))) {
            case TIME_OUT -> fail(deadlinePassed());
            case SUBSCRIBE -> subscribeThenRetry();
            case RETRY -> attempt();
            case WAIT -> {}
            case UNDO -> parts.store().undo(answer, sent);
        }
    }

    private void subscribeThenRetry() {
        parts.queues().subscribe(key).whenComplete((ok, error) -> {
            if (error == null) {
                if (isInFlight()) { // not if the caller gave up while subscribing
                    attempt();
                }
                return;
            }
            LockException failure = StoreCalls.storeFailure("subscribe to '" + key.name() + "'", error);
            if (failure instanceof StoreCalls.NoAnswer || parts.store().isClosed()) {
                fail(failure); // the store does not answer, as for any call; or the client is closing
            } else {
                pollWithoutWakeUps(failure);
            }
        });
    }

    /**
     * The store refused the subscription while it answers calls (a Redis client whose notification
     * connection is not back yet after a restart): wait on, asking again after a short pause, and subscribe
     * again at the next busy answer. The deadline still ends the wait, naming the refusal.
     */
    private void pollWithoutWakeUps(LockException refusal) {
        if (afterRefusedWakeUps(refusal, POLL_WITHOUT_WAKE_UPS_NANOS)) {
            attempt(); // a local release meanwhile: the resource may be free now
        }
    }

    private void granted(String owner, long token, long sentNanos) {
        LeaseImpl lease = new LeaseImpl(parts.leases(), terms, owner, token, sentNanos);
        if (!lease.isValid()) {
            // The answer came after the lease's local deadline (or while the store session is not live):
            // never hand out a lease that is already invalid. Give it back and keep waiting. The retry
            // asks with a fresh owner id: this give-back may reach the store after the retry's grant (it
            // failed at the operation timeout, or went on another connection), and must not remove it.
            parts.store()
                    .giveBack(key, owner, " granted too late", terms.leaseMillis())
                    .whenComplete((released, e) -> retryAfterUselessGrant());
            return;
        }
        if (!takeGrant()) {
            lease.releaseAsync();
            return;
        }
        deliver(lease, true);
    }

    /**
     * Hands a lease to the caller once this wait is DONE: watched, out of the local queue (promoting the
     * next head unless the hold stays with this client), completed unless the client closed meanwhile.
     */
    private void deliver(LeaseImpl lease, boolean promoteNext) {
        parts.watchdog().add(lease);
        if (!lease.isHeld()) {
            parts.watchdog().remove(lease); // lost on its way here (a hold passed on): its signal has fired
        }
        parts.queues().leave(this, promoteNext);
        if (parts.store().isClosed()) {
            // close() marks the client closed before it looks at held leases: one of us releases it.
            lease.releaseAsync();
            completeFailed(new LockException("the LockClient was closed while waiting"));
            return;
        }
        if (!completeGranted(lease)) {
            lease.releaseAsync();
        }
    }

    private void retryAfterUselessGrant() {
        if (asksBeforeDeadline()) {
            request.drawFreshOwner();
            attempt();
        } else {
            fail(timeout(": the store's grant arrived when the lease would already have expired"));
        }
    }

    /** Rejected by the local queue before it ever entered it. */
    void reject(LockException cause) {
        end();
        completeRejected(cause);
    }

    /**
     * Ends the wait with an error (timeout, store failure, client closed).
     *
     * @return false if the wait had ended already
     */
    boolean fail(LockException cause) {
        if (!abandon()) {
            return false;
        }
        completeFailed(cause);
        return true;
    }

    /** Moves to DONE from any other state, leaves the local queue and the store queue. */
    @Override
    boolean abandon() {
        if (!finish()) {
            return false;
        }
        parts.queues().leave(this);
        return true;
    }

    /**
     * Moves to DONE from any other state, stops the timers and leaves the store queue (sent after the
     * transition: no store call under the wait's lock).
     *
     * @return false if the wait had ended already
     */
    private boolean finish() {
        Ending ending = end();
        if (ending == Ending.ALREADY_DONE) {
            return false;
        }
        // A backend may keep an entry for a waiting caller in any mode (ZooKeeper keeps its sequential
        // node), so every waiter that asked and gives up says so.
        AcquireRequest last = request.current();
        if (ending == Ending.ENDED_AFTER_ASKING && last.waiting()) {
            parts.store().leaveQueue(key, last.owner(), terms.leaseMillis());
        }
        return true;
    }

    /** The timeout at the deadline, naming a refused wake-up subscription if there was one. */
    private LockException deadlinePassed() {
        LockException refused = wakeUpsRefused();
        return timeout(heldBackDetail()
                + (refused == null ? "" : " (the store refused wake-ups meanwhile: " + refused.getMessage() + ")"));
    }
}
