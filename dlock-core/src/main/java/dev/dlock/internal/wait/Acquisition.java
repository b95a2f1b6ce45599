package dev.dlock.internal.wait;

import dev.dlock.LockException;
import dev.dlock.internal.base.Checks;
import dev.dlock.internal.lease.LeaseImpl;
import dev.dlock.internal.lease.Terms;
import dev.dlock.internal.store.Store;
import dev.dlock.internal.store.StoreCalls;
import dev.dlock.spi.AcquireRequest;
import dev.dlock.spi.AcquireResult;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.ScheduledFuture;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.locks.ReentrantLock;
import java.util.function.Supplier;

/**
 * One caller's wait for one resource: a small state machine driven by store answers, wake-ups and
 * timers.
 *
 * <p>States: {@code QUEUED} (behind another local caller, only its deadline timer runs), {@code
 * IN_FLIGHT} (one attempt is at the store), {@code PAUSED} (head, busy answer received, waiting for a
 * wake-up or a retry timer), {@code DONE}. A wake-up during an attempt is remembered and causes an
 * immediate retry when the busy answer arrives, so no release is missed.
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
public final class Acquisition extends WaitOutcome {
    /** How soon a wait whose wake-up subscription was refused asks the store again. */
    private static final long POLL_WITHOUT_WAKE_UPS_NANOS = TimeUnit.MILLISECONDS.toNanos(100);

    private enum State {
        QUEUED,
        IN_FLIGHT,
        PAUSED,
        DONE
    }

    private final Parts parts;
    private final Terms terms;

    private final long deadlineNanos;
    private final String downgradeFrom;
    private final WaitRequest request;

    private final ReentrantLock lock = new ReentrantLock();
    private State state = State.QUEUED;
    private boolean wakePending;
    private boolean subscribed;
    /** Whether an attempt was sent: only then may the store hold a queue entry of ours. */
    private boolean attempted;
    /** The last refusal of a wake-up subscription, named if the wait times out; null if none. */
    private LockException wakeUpsRefused;

    private ScheduledFuture<?> timer;
    /** Ends a timed wait at its deadline, whatever is in flight then (a zero wait makes one attempt). */
    private ScheduledFuture<?> deadlineTimer;

    /**
     * A wait, not started yet ({@link LocalQueues#enqueue} starts it).
     *
     * @param owners draws owner ids: one for the first attempt, a fresh one for a retry after a give-back
     * @param downgradeFrom the owner of this thread's write hold when it takes the read lock, else null
     */
    Acquisition(Parts parts, Terms terms, Supplier<String> owners, long waitNanos, String downgradeFrom) {
        super(parts.events(), terms.key(), waitNanos);
        this.parts = parts;
        this.terms = terms;
        this.downgradeFrom = downgradeFrom;
        this.deadlineNanos = Checks.deadline(startNanos(), waitNanos);
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
        ScheduledFuture<?> t = parts.store().schedule(() -> fail(deadlinePassed()), deadlineNanos - System.nanoTime());
        lock.lock();
        try {
            if (state == State.DONE) {
                if (t != null) {
                    t.cancel(false);
                }
            } else {
                deadlineTimer = t;
            }
        } finally {
            lock.unlock();
        }
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
        lock.lock();
        try {
            if (state != State.QUEUED) {
                lock.unlock();
                wake(false);
                return;
            }
            cancelTimer();
            state = State.IN_FLIGHT;
        } finally {
            if (lock.isHeldByCurrentThread()) {
                lock.unlock();
            }
        }
        attempt();
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
        boolean start = false;
        lock.lock();
        try {
            if (state == State.IN_FLIGHT) {
                wakePending = true;
                return;
            }
            if (state == State.QUEUED) {
                if (!startQueued) {
                    return;
                }
                start = true;
            } else if (state != State.PAUSED) {
                return;
            } else {
                cancelTimer();
                state = State.IN_FLIGHT;
            }
        } finally {
            lock.unlock();
        }
        if (start) {
            becomeHead();
        } else {
            attempt();
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

    /** Whether the wait goes on: not done, deadline not passed. */
    boolean isLive() {
        lock.lock();
        try {
            return state != State.DONE && System.nanoTime() - deadlineNanos < 0;
        } finally {
            lock.unlock();
        }
    }

    /**
     * Takes a hold passed by another local caller ({@link Cohort}) if the wait goes on and the lease is
     * still valid; an attempt of ours still at the store is undone when its answer arrives.
     *
     * @return false if the wait ended (or its deadline passed) or the lease is not valid
     */
    boolean takePass(LeaseImpl lease) {
        if (System.nanoTime() - deadlineNanos >= 0 || !lease.isValid() || !finish()) {
            return false;
        }
        deliver(lease, false);
        return true;
    }

    private void attempt() {
        attempted = true;
        long sentNanos = System.nanoTime();
        AcquireRequest sent = request.current();
        parts.store().acquire(sent, (answer, error) -> onAnswer(sent, answer, error, sentNanos));
    }

    private void onAnswer(AcquireRequest sent, AcquireResult answer, Throwable error, long sentNanos) {
        if (error instanceof Store.NotSent) {
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
        long now = System.nanoTime();
        Step next;
        lock.lock();
        try {
            if (state != State.IN_FLIGHT) {
                next = Step.UNDO; // gave up while the attempt was on its way
            } else if (now - deadlineNanos >= 0) {
                next = Step.TIME_OUT;
            } else if (!subscribed) {
                subscribed = true;
                wakePending = false;
                next = Step.SUBSCRIBE;
            } else if (wakePending) {
                wakePending = false;
                next = Step.RETRY;
            } else {
                state = State.PAUSED;
                timer = parts.store().schedule(() -> wake(true), request.retryDelayNanos(answer, now, deadlineNanos));
                next = Step.WAIT;
            }
        } finally {
            lock.unlock();
        }
        switch (next) {
            case TIME_OUT -> fail(deadlinePassed());
            case SUBSCRIBE -> subscribeThenRetry();
            case RETRY -> attempt();
            case WAIT -> {}
            case UNDO -> parts.store().undo(answer, sent);
        }
    }

    private enum Step {
        TIME_OUT,
        SUBSCRIBE,
        RETRY,
        WAIT,
        UNDO
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
        boolean retryNow = false;
        lock.lock();
        try {
            if (state != State.IN_FLIGHT) {
                return;
            }
            subscribed = false;
            wakeUpsRefused = refusal;
            if (wakePending) { // a local release meanwhile: the resource may be free now
                wakePending = false;
                retryNow = true;
            } else {
                state = State.PAUSED;
                timer = parts.store().schedule(() -> wake(true), POLL_WITHOUT_WAKE_UPS_NANOS);
            }
        } finally {
            lock.unlock();
        }
        if (retryNow) {
            attempt();
        }
    }

    private boolean isInFlight() {
        lock.lock();
        try {
            return state == State.IN_FLIGHT;
        } finally {
            lock.unlock();
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
        boolean mine;
        lock.lock();
        try {
            mine = state == State.IN_FLIGHT;
            if (mine) {
                state = State.DONE;
            }
        } finally {
            lock.unlock();
        }
        if (!mine) {
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
        boolean retry;
        lock.lock();
        try {
            retry = state == State.IN_FLIGHT && System.nanoTime() - deadlineNanos < 0;
        } finally {
            lock.unlock();
        }
        if (retry) {
            request.drawFreshOwner();
            attempt();
        } else {
            fail(timeout(": the store's grant arrived when the lease would already have expired"));
        }
    }

    /** Rejected by the local queue before it ever entered it. */
    void reject(LockException cause) {
        lock.lock();
        try {
            state = State.DONE;
        } finally {
            lock.unlock();
        }
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
     * lock is released: no store call under our lock).
     *
     * @return false if the wait had ended already
     */
    private boolean finish() {
        boolean leaveStoreQueue;
        lock.lock();
        try {
            if (state == State.DONE) {
                return false;
            }
            state = State.DONE;
            cancelTimer();
            if (deadlineTimer != null) {
                deadlineTimer.cancel(false);
                deadlineTimer = null;
            }
            // A backend may keep an entry for a waiting caller in any mode (ZooKeeper keeps its sequential
            // node), so every waiter that gives up says so.
            leaveStoreQueue = attempted && request.current().waiting();
        } finally {
            lock.unlock();
        }
        if (leaveStoreQueue) {
            parts.store().leaveQueue(key, request.current().owner(), terms.leaseMillis());
        }
        return true;
    }

    /** The timeout at the deadline, naming a refused wake-up subscription if there was one. */
    private LockException deadlinePassed() {
        LockException refused;
        lock.lock();
        try {
            refused = wakeUpsRefused;
        } finally {
            lock.unlock();
        }
        return timeout(heldBackDetail()
                + (refused == null ? "" : " (the store refused wake-ups meanwhile: " + refused.getMessage() + ")"));
    }

    private void cancelTimer() {
        if (timer != null) {
            timer.cancel(false);
            timer = null;
        }
    }
}
