package dev.dlock.internal;

import dev.dlock.LockException;
import dev.dlock.LockTimeoutException;
import dev.dlock.spi.AcquireRequest;
import dev.dlock.spi.AcquireResult;
import dev.dlock.spi.LockKey;
import dev.dlock.spi.Mode;
import java.time.Duration;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.CompletionStage;
import java.util.concurrent.ScheduledFuture;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.atomic.AtomicReference;
import java.util.concurrent.locks.ReentrantLock;

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
 * <p>Failure modes: a grant that arrives after the caller gave up (timeout, cancel, close), or after
 * the operation timeout ended the attempt, is released at once, so nothing is left held; a waiting caller
 * that gives up removes its store queue entry.
 */
final class Acquisition {
    private enum State {
        QUEUED,
        IN_FLIGHT,
        PAUSED,
        DONE
    }

    final Engine engine;
    final LockKey key;
    final String owner;
    final CompletableFuture<LeaseImpl> result = new CompletableFuture<>();
    private final long startNanos;
    private final long deadlineNanos;
    private final long waitNanos;
    private final long leaseMillis;
    private final boolean renew;
    private final int permits;
    private final String downgradeFrom;
    private final ReentrantLock lock = new ReentrantLock();
    private State state = State.QUEUED;
    private boolean wakePending;
    private boolean subscribed;
    private boolean queuedInStore;
    private boolean waitedInStore;
    private ScheduledFuture<?> timer;
    /** Ends a timed wait at its deadline, whatever is in flight then (a zero wait makes one attempt). */
    private ScheduledFuture<?> deadlineTimer;

    Acquisition(
            Engine engine,
            LockKey key,
            String owner,
            long waitNanos,
            long leaseMillis,
            boolean renew,
            int permits,
            String downgradeFrom) {
        this.engine = engine;
        this.key = key;
        this.owner = owner;
        this.waitNanos = waitNanos;
        this.leaseMillis = leaseMillis;
        this.renew = renew;
        this.permits = permits;
        this.downgradeFrom = downgradeFrom;
        this.startNanos = System.nanoTime();
        this.deadlineNanos = Checks.deadline(startNanos, waitNanos);
        result.whenComplete((lease, error) -> {
            if (result.isCancelled() && abandon(null)) {
                long waited = System.nanoTime() - startNanos;
                engine.events.fire(l -> l.failed(key.name(), Duration.ofNanos(waited), error));
            }
        });
    }

    /** Cancels the wait; a lease granted meanwhile is released. */
    void cancel() {
        result.cancel(false);
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
        ScheduledFuture<?> t = engine.schedule(() -> fail(timeout("")), deadlineNanos - System.nanoTime());
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

    /** Now first among local callers: start asking the store. */
    void becomeHead() {
        if (engine.isClosed()) {
            fail(new LockException("the LockClient was closed while waiting"));
            return;
        }
        lock.lock();
        try {
            if (state != State.QUEUED) {
                return;
            }
            cancelTimer();
            state = State.IN_FLIGHT;
        } finally {
            lock.unlock();
        }
        attempt();
    }

    /**
     * The resource may be free: retry now, or right after the attempt in flight. A head left queued
     * while a hold passed between local callers ({@link Cohort}) starts now.
     */
    void wake() {
        wake(true);
    }

    /**
     * Like {@link #wake()}.
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
        return permits == 1 && downgradeFrom == null && renew == lease.renew && leaseMillis == lease.leaseMillis();
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
        boolean leaveStoreQueue;
        lock.lock();
        try {
            if (state == State.DONE || System.nanoTime() - deadlineNanos >= 0 || !lease.isValid()) {
                return false;
            }
            state = State.DONE;
            cancelTimer();
            if (deadlineTimer != null) {
                deadlineTimer.cancel(false);
                deadlineTimer = null;
            }
            leaveStoreQueue = waitedInStore;
        } finally {
            lock.unlock();
        }
        if (leaveStoreQueue) {
            engine.call("leave the queue of '" + key.name() + "'", () -> engine.backend.cancelWait(key, owner));
        }
        deliver(lease, false);
        return true;
    }

    private void attempt() {
        long queueMillis = waitNanos == 0 ? 0 : Math.max(1, leaseMillis);
        AcquireRequest request = new AcquireRequest(key, owner, leaseMillis, permits, queueMillis, downgradeFrom);
        if (queueMillis > 0) {
            // A backend may keep an entry for a waiting caller in any mode (ZooKeeper keeps its sequential
            // node), so every waiter that gives up says so; FAIR and WRITE entries also need refreshing.
            waitedInStore = true;
            queuedInStore = key.mode() == Mode.FAIR || key.mode() == Mode.WRITE;
        }
        long sentNanos = System.nanoTime();
        AtomicReference<CompletionStage<AcquireResult>> sent = new AtomicReference<>();
        engine.call("acquire '" + key.name() + "'", () -> {
                    CompletionStage<AcquireResult> stage = engine.backend.acquire(request);
                    sent.set(stage);
                    return stage;
                })
                .whenComplete((answer, error) -> {
                    if (error != null && sent.get() != null) {
                        // Timed out: the store may still act on the request, so undo a late answer.
                        sent.get().thenAccept(late -> undo(late, request));
                    }
                    onAnswer(request, answer, error, sentNanos);
                });
    }

    /**
     * Undoes an answer nobody will use: releases a grant, or removes the queue entry a busy answer to a
     * waiting request may have left (the caller's cancelWait may have reached the store before it).
     */
    private void undo(AcquireResult answer, AcquireRequest request) {
        if (answer.isGranted()) {
            engine.call("release '" + key.name() + "' granted too late", () -> engine.backend.release(key, owner));
        } else if (request.waiting()) {
            engine.call("leave the queue of '" + key.name() + "'", () -> engine.backend.cancelWait(key, owner));
        }
    }

    private void onAnswer(AcquireRequest request, AcquireResult answer, Throwable error, long sentNanos) {
        if (error != null) {
            // The store may have granted or queued us although the answer failed: undo both.
            engine.call(
                    "release '" + key.name() + "' after a failed acquire", () -> engine.backend.release(key, owner));
            if (!fail(StoreCalls.storeFailure("acquire '" + key.name() + "'", error)) && request.waiting()) {
                engine.call("leave the queue of '" + key.name() + "'", () -> engine.backend.cancelWait(key, owner));
            }
            return;
        }
        if (answer.isGranted()) {
            granted(answer.token(), sentNanos);
            return;
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
                timer = engine.schedule(this::wake, retryDelay(answer, now));
                next = Step.WAIT;
            }
        } finally {
            lock.unlock();
        }
        switch (next) {
            case TIME_OUT -> fail(timeout(""));
            case SUBSCRIBE -> subscribeThenRetry();
            case RETRY -> attempt();
            case WAIT -> {}
            case UNDO -> undo(answer, request);
        }
    }

    private enum Step {
        TIME_OUT,
        SUBSCRIBE,
        RETRY,
        WAIT,
        UNDO
    }

    private long retryDelay(AcquireResult answer, long now) {
        long delay = deadlineNanos - now;
        // Safety net against a lost wake-up: retry when the blocking hold or queue entry would expire at
        // the latest, or after one lease time when the store cannot tell.
        long retryMillis = answer.retryAfterMillis() >= 0 ? answer.retryAfterMillis() + 1 : leaseMillis;
        delay = Math.min(delay, TimeUnit.MILLISECONDS.toNanos(retryMillis));
        if (queuedInStore) {
            delay = Math.min(delay, TimeUnit.MILLISECONDS.toNanos(leaseMillis) / 3);
        }
        return Math.max(delay, 0);
    }

    private void subscribeThenRetry() {
        // The first caller of this queue takes the reference; a later head waits until it is live.
        CompletableFuture<?> live = LocalQueue.markSubscribed(engine, key)
                ? engine.subscriptions.acquire(key)
                : engine.subscriptions.live(key);
        live.whenComplete((ok, error) -> {
            if (error != null) {
                fail(StoreCalls.storeFailure("subscribe to '" + key.name() + "'", error));
            } else if (isInFlight()) { // not if the caller gave up while subscribing
                attempt();
            }
        });
    }

    private boolean isInFlight() {
        lock.lock();
        try {
            return state == State.IN_FLIGHT;
        } finally {
            lock.unlock();
        }
    }

    private void granted(long token, long sentNanos) {
        LeaseImpl lease = new LeaseImpl(engine, key, owner, token, leaseMillis, renew, sentNanos);
        if (!lease.isValid()) {
            // The answer came after the lease's local deadline (or while the store session is not live):
            // never hand out a lease that is already invalid. Give it back and keep waiting; the retry,
            // which has the same owner, waits for the give-back, or the give-back could overtake it on
            // another connection and remove the new grant.
            engine.call("release '" + key.name() + "' granted too late", () -> engine.backend.release(key, owner))
                    .whenComplete((released, error) -> retryAfterUselessGrant());
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
        engine.watchdog.add(lease);
        if (!lease.isHeld()) {
            engine.watchdog.remove(lease); // lost on its way here (a hold passed on): its signal has fired
        }
        LocalQueue.leave(engine, this, promoteNext);
        if (engine.isClosed()) {
            // close() marks the client closed before it looks at held leases: one of us releases it.
            lease.releaseAsync();
            LockException cause = new LockException("the LockClient was closed while waiting");
            long waited = System.nanoTime() - startNanos;
            engine.events.fire(l -> l.failed(key.name(), Duration.ofNanos(waited), cause));
            result.completeExceptionally(cause);
            return;
        }
        long waited = System.nanoTime() - startNanos;
        engine.events.fire(l -> l.acquired(key.name(), Duration.ofNanos(waited)));
        if (!result.complete(lease)) {
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
        result.completeExceptionally(cause);
    }

    /**
     * Ends the wait with an error (timeout, store failure, client closed).
     *
     * @return false if the wait had ended already
     */
    boolean fail(LockException cause) {
        if (!abandon(cause)) {
            return false;
        }
        long waited = System.nanoTime() - startNanos;
        engine.events.fire(l -> l.failed(key.name(), Duration.ofNanos(waited), cause));
        result.completeExceptionally(cause);
        return true;
    }

    /** Moves to DONE from any other state, leaves the local queue and the store queue. */
    private boolean abandon(LockException cause) {
        boolean removeStoreEntry;
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
            removeStoreEntry = waitedInStore;
        } finally {
            lock.unlock();
        }
        if (removeStoreEntry) {
            engine.call("leave the queue of '" + key.name() + "'", () -> engine.backend.cancelWait(key, owner));
        }
        LocalQueue.leave(engine, this);
        return true;
    }

    private void cancelTimer() {
        if (timer != null) {
            timer.cancel(false);
            timer = null;
        }
    }

    private LockTimeoutException timeout(String detail) {
        return new LockTimeoutException("could not acquire " + key.mode().name().toLowerCase() + " lock '" + key.name()
                + "' within " + Duration.ofNanos(waitNanos) + detail);
    }
}
