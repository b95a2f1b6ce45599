package dev.dlock.internal.wait;

import dev.dlock.LockException;
import dev.dlock.internal.base.Checks;
import dev.dlock.internal.base.ListenerEvents;
import dev.dlock.spi.LockKey;
import java.util.concurrent.ScheduledFuture;
import java.util.concurrent.locks.ReentrantLock;

/**
 * The state machine of one wait: where it stands, and its two timers. {@link Acquisition} (the subclass)
 * does what each transition asks for: store calls, subscriptions, handing over a lease.
 *
 * <p>States: {@code QUEUED} (behind another local caller, only its deadline timer runs), {@code
 * IN_FLIGHT} (one attempt is at the store), {@code PAUSED} (head, busy answer received, waiting for a
 * wake-up or a retry timer), {@code DONE}. A wake-up during an attempt is remembered and causes an
 * immediate retry when the busy answer arrives, so no release is missed.
 *
 * <p>Design note: every method is one transition under the wait's lock and returns what must happen
 * next; none calls the store or completes the caller's future, so the subclass acts after the lock is
 * released. The only thing started under the lock is a retry timer ({@link #scheduleWake}), so that a
 * wake-up cannot slip between the pause and its timer. A superclass rather than a field for the same
 * reason as {@link WaitOutcome}: one object per wait.
 *
 * <p>Concurrency: store answers, wake-ups, timers and the caller's cancel run on different threads; the
 * lock orders them. {@link #deadlineNanos} is final.
 */
abstract class WaitState extends WaitOutcome {
    private enum State {
        QUEUED,
        IN_FLIGHT,
        PAUSED,
        DONE
    }

    /** What an attempt's busy answer leads to ({@link #afterBusy}). */
    enum Step {
        /** The deadline passed. */
        TIME_OUT,
        /** First busy answer: subscribe to wake-ups, then ask again. */
        SUBSCRIBE,
        /** A wake-up came while the attempt was at the store: ask again now. */
        RETRY,
        /** Paused until a wake-up or the retry timer. */
        WAIT,
        /** The wait ended while the attempt was on its way: undo what the answer did. */
        UNDO
    }

    /** What a wake-up leads to ({@link #afterWake}). */
    enum Wake {
        /** Nothing now (remembered during an attempt, or the wait is not asking). */
        NONE,
        /** A queued head starts asking. */
        START,
        /** A paused head asks again. */
        ATTEMPT
    }

    /** How {@link #end} found the wait. */
    enum Ending {
        /** It had ended before: nothing to do. */
        ALREADY_DONE,
        /** Ended now; it never asked the store. */
        ENDED,
        /** Ended now after asking the store: a store queue entry of its owner may exist. */
        ENDED_AFTER_ASKING
    }

    /** When the wait ends at the latest ({@link #nanoTime()}; {@code Long.MAX_VALUE} for never). */
    final long deadlineNanos;

    private final ReentrantLock lock = new ReentrantLock();
    private State state = State.QUEUED;
    private boolean wakePending;
    private boolean subscribed;
    /** Whether the wait started asking: only then may the store hold a queue entry of ours. */
    private boolean asked;
    /** The last refusal of a wake-up subscription, named if the wait times out; null if none. */
    private LockException wakeUpsRefused;

    private ScheduledFuture<?> timer;
    /** Ends a timed wait at its deadline, whatever is in flight then (a zero wait makes one attempt). */
    private ScheduledFuture<?> deadlineTimer;

    WaitState(ListenerEvents events, LockKey key, long waitNanos, long startNanos) {
        super(events, key, waitNanos, startNanos);
        this.deadlineNanos = Checks.deadline(startNanos(), waitNanos);
    }

    /** Starts the timer that wakes this wait after {@code delayNanos} (called under the lock). */
    abstract ScheduledFuture<?> scheduleWake(long delayNanos);

    /** Keeps the deadline timer to stop at the end, or stops it now if the wait already ended. */
    final void keepDeadlineTimer(ScheduledFuture<?> deadline) {
        lock.lock();
        try {
            if (state == State.DONE) {
                deadline.cancel(false);
            } else {
                deadlineTimer = deadline;
            }
        } finally {
            lock.unlock();
        }
    }

    /** QUEUED to IN_FLIGHT: the head starts asking. False if the wait was not queued. */
    final boolean startAsking() {
        lock.lock();
        try {
            if (state != State.QUEUED) {
                return false;
            }
            cancelTimer();
            state = State.IN_FLIGHT;
            asked = true;
            return true;
        } finally {
            lock.unlock();
        }
    }

    /**
     * The resource may be free.
     *
     * @param startQueued false to leave a queued head queued (held back after a chain of passes)
     */
    final Wake afterWake(boolean startQueued) {
        lock.lock();
        try {
            switch (state) {
                case IN_FLIGHT:
                    wakePending = true;
                    return Wake.NONE;
                case QUEUED:
                    return startQueued ? Wake.START : Wake.NONE;
                case PAUSED:
                    cancelTimer();
                    state = State.IN_FLIGHT;
                    return Wake.ATTEMPT;
                default:
                    return Wake.NONE;
            }
        } finally {
            lock.unlock();
        }
    }

    /**
     * An attempt's busy answer arrived at {@code now}.
     *
     * @param retryDelayNanos how long to pause before asking again if nothing wakes the wait
     */
    final Step afterBusy(long now, long retryDelayNanos) {
        lock.lock();
        try {
            if (state != State.IN_FLIGHT) {
                return Step.UNDO; // gave up while the attempt was on its way
            }
            if (now - deadlineNanos >= 0) {
                return Step.TIME_OUT;
            }
            if (!subscribed) {
                subscribed = true;
                wakePending = false;
                return Step.SUBSCRIBE;
            }
            if (wakePending) {
                wakePending = false;
                return Step.RETRY;
            }
            state = State.PAUSED;
            timer = scheduleWake(retryDelayNanos);
            return Step.WAIT;
        } finally {
            lock.unlock();
        }
    }

    /**
     * The store refused the wake-up subscription: subscribe again at the next busy answer, and ask again
     * after {@code pollNanos}.
     *
     * @return true to ask again now (a wake-up came meanwhile); false if paused or no longer asking
     */
    final boolean afterRefusedWakeUps(LockException refusal, long pollNanos) {
        lock.lock();
        try {
            if (state != State.IN_FLIGHT) {
                return false;
            }
            subscribed = false;
            wakeUpsRefused = refusal;
            if (wakePending) {
                wakePending = false;
                return true;
            }
            state = State.PAUSED;
            timer = scheduleWake(pollNanos);
            return false;
        } finally {
            lock.unlock();
        }
    }

    /** IN_FLIGHT to DONE for a grant. False if the wait was not asking (it gave up meanwhile). */
    final boolean takeGrant() {
        lock.lock();
        try {
            if (state != State.IN_FLIGHT) {
                return false;
            }
            state = State.DONE;
            return true;
        } finally {
            lock.unlock();
        }
    }

    /** Whether an attempt is on its way and the deadline has not passed. */
    final boolean asksBeforeDeadline() {
        lock.lock();
        try {
            return state == State.IN_FLIGHT && nanoTime() - deadlineNanos < 0;
        } finally {
            lock.unlock();
        }
    }

    /** Whether an attempt is on its way (not if the caller gave up meanwhile). */
    final boolean isInFlight() {
        lock.lock();
        try {
            return state == State.IN_FLIGHT;
        } finally {
            lock.unlock();
        }
    }

    /** Whether the wait goes on: not done, deadline not passed. */
    final boolean isLive() {
        lock.lock();
        try {
            return state != State.DONE && nanoTime() - deadlineNanos < 0;
        } finally {
            lock.unlock();
        }
    }

    /** Moves to DONE from any other state and stops both timers. */
    final Ending end() {
        lock.lock();
        try {
            if (state == State.DONE) {
                return Ending.ALREADY_DONE;
            }
            state = State.DONE;
            cancelTimer();
            if (deadlineTimer != null) {
                deadlineTimer.cancel(false);
                deadlineTimer = null;
            }
            return asked ? Ending.ENDED_AFTER_ASKING : Ending.ENDED;
        } finally {
            lock.unlock();
        }
    }

    /** The last refusal of a wake-up subscription, or null. */
    final LockException wakeUpsRefused() {
        lock.lock();
        try {
            return wakeUpsRefused;
        } finally {
            lock.unlock();
        }
    }

    private void cancelTimer() {
        if (timer != null) {
            timer.cancel(false);
            timer = null;
        }
    }
}
