package dev.dlock.internal.store;

import dev.dlock.LockBackendException;
import dev.dlock.LockException;
import dev.dlock.internal.base.Timebase;
import java.time.Duration;
import java.util.Set;
import java.util.concurrent.CancellationException;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.CompletionException;
import java.util.concurrent.CompletionStage;
import java.util.concurrent.ConcurrentHashMap;
import java.util.concurrent.ConcurrentLinkedQueue;
import java.util.concurrent.ExecutionException;
import java.util.concurrent.RejectedExecutionException;
import java.util.concurrent.ScheduledExecutorService;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.TimeoutException;
import java.util.concurrent.atomic.AtomicBoolean;
import java.util.concurrent.locks.LockSupport;
import java.util.function.BiConsumer;
import java.util.function.Consumer;
import java.util.function.IntSupplier;

/**
 * The operation timeout of every store call of one client ({@link Store} sends the calls).
 *
 * <p>Design: calls not answered yet wait in one queue, oldest first. Every call has the same timeout, so
 * the queue is in deadline order and one scheduler task, armed for the oldest deadline, serves them all:
 * a store call costs no timer of its own. A call that times out fails its caller at once; its own stage is
 * kept in view until the store answers it, so that {@code close()} can wait for the reactions to a late
 * answer (releasing a late grant, cancelling a late subscription) while the backend is still open. The
 * caller's own reaction to an answer is attached here, before the answer can arrive, and a call counts as
 * settled only after it ran: a release that reaction sends is in view before its cause leaves it.
 *
 * <p>Failures become {@link LockBackendException} (a {@link LockException} from the backend passes as is).
 */
public final class StoreCalls {
    /** How often close() looks again for a call still being handed to the backend. */
    private static final long PEEK_NANOS = TimeUnit.MICROSECONDS.toNanos(100);

    private final ScheduledExecutorService scheduler;
    private final Timebase time;
    private final Duration operationTimeout;
    private final long timeoutNanos;
    /**
     * Store calls not answered yet, oldest first: for the operation timeout, and so that close() lets them
     * settle before it closes the backend. Answered entries are dropped lazily from the head.
     */
    private final ConcurrentLinkedQueue<Unanswered> unanswered = new ConcurrentLinkedQueue<>();
    /** Timed-out calls whose store answer has not arrived yet ({@link #trackLateAnswer}). */
    private final Set<CompletableFuture<?>> lateAnswers = ConcurrentHashMap.newKeySet();

    private final AtomicBoolean expiryScheduled = new AtomicBoolean();

    StoreCalls(ScheduledExecutorService scheduler, Timebase time, Duration operationTimeout) {
        this.scheduler = scheduler;
        this.time = time;
        this.operationTimeout = operationTimeout;
        this.timeoutNanos = operationTimeout.toNanos();
    }

    /**
     * Bounds one store operation, already sent, by the operation timeout. Failures become {@link
     * LockBackendException}. The call is described as {@code verb 'name'detail} in messages, which are
     * built only on failure.
     *
     * @param name the lock name, or null when the call is about no single name
     * @param lateAnswer if the call times out (or the client closes first) and the store answers it
     *     later, receives that answer, so that the caller can undo what nobody will use; null for none. It
     *     costs nothing unless the call times out.
     * @param reaction the caller's reaction to the outcome, null for none: attached here, before the
     *     answer can arrive, so the call counts as settled for close() only once it ran (and the calls it
     *     sent are in view)
     * @return completes with the outcome once {@code reaction} ran
     */
    <T> CompletableFuture<T> track(
            String verb,
            String name,
            String detail,
            CompletionStage<T> sent,
            Consumer<? super T> lateAnswer,
            BiConsumer<? super T, ? super Throwable> reaction) {
        CompletableFuture<T> stage = sent.toCompletableFuture();
        if (stage.isDone()) {
            return answeredAtOnce(stage, verb, name, detail, reaction);
        }
        CompletableFuture<T> result = new CompletableFuture<>();
        CompletableFuture<T> settled = reaction == null ? result : result.whenComplete(reaction);
        if (scheduler.isShutdown()) {
            result.completeExceptionally(new LockException(what(verb, name, detail) + ": the LockClient is closed"));
            return settled;
        }
        CompletableFuture<?> answered =
                stage.whenComplete((v, e) -> settle(result, lateAnswer, verb, name, detail, v, e));
        unanswered.add(new Unanswered(result, settled, answered, verb, name, detail, time.nanoTime() + timeoutNanos));
        scheduleExpiry();
        return settled;
    }

    /**
     * A call the backend answered before returning (the memory store, a refusal, a call not sent): no
     * timeout to track, and the reaction runs here, on the caller's thread, as it would have from {@code
     * whenComplete} on a completed stage. Same outcome as the tracked path, without its three futures.
     */
    private static <T> CompletableFuture<T> answeredAtOnce(
            CompletableFuture<T> stage,
            String verb,
            String name,
            String detail,
            BiConsumer<? super T, ? super Throwable> reaction) {
        T value = null;
        Throwable error = null;
        try {
            value = stage.join();
        } catch (CompletionException | CancellationException e) {
            error = storeFailure(what(verb, name, detail), e);
        }
        if (reaction != null) {
            try {
                reaction.accept(value, error);
            } catch (RuntimeException | Error e) {
                if (error == null) {
                    error = new CompletionException(e); // as whenComplete fails its stage
                }
            }
        }
        return error == null ? CompletableFuture.completedFuture(value) : CompletableFuture.failedFuture(error);
    }

    static String what(String verb, String name, String detail) {
        return name == null ? verb : verb + " '" + name + "'" + detail;
    }

    /**
     * A store call waiting for its answer. Identity equality on purpose: {@link #unanswered} removes
     * exactly this entry.
     */
    private static final class Unanswered {
        final CompletableFuture<?> result;
        final CompletableFuture<?> settled;
        /**
         * Completes once the store's answer has been handled (handed to the caller, or to the late-answer
         * handler when the call had failed first): what close() waits for after a timeout.
         */
        final CompletableFuture<?> answered;

        final String verb;
        final String name;
        final String detail;
        final long deadlineNanos;

        Unanswered(
                CompletableFuture<?> result,
                CompletableFuture<?> settled,
                CompletableFuture<?> answered,
                String verb,
                String name,
                String detail,
                long deadlineNanos) {
            this.result = result;
            this.settled = settled;
            this.answered = answered;
            this.verb = verb;
            this.name = name;
            this.detail = detail;
            this.deadlineNanos = deadlineNanos;
        }

        String what() {
            return StoreCalls.what(verb, name, detail);
        }
    }

    /**
     * Makes sure one scheduler task runs when the oldest unanswered call's deadline passes. Every call
     * has the same timeout, so the queue is in deadline order and one timer serves all of them: a store
     * call costs no timer of its own (no scheduler wake-up per call).
     */
    private void scheduleExpiry() {
        Unanswered oldest = oldestUnanswered();
        if (oldest == null || !expiryScheduled.compareAndSet(false, true)) {
            return;
        }
        try {
            scheduler.schedule(this::expireUnanswered, oldest.deadlineNanos - time.nanoTime(), TimeUnit.NANOSECONDS);
        } catch (RejectedExecutionException closed) {
            Unanswered u;
            while ((u = unanswered.poll()) != null) {
                if (!u.result.isDone()) {
                    trackLateAnswer(u);
                }
                u.result.completeExceptionally(new LockException(u.what() + ": the LockClient is closed"));
            }
        }
    }

    /** Drops answered calls from the head of the queue; returns the oldest unanswered one, or null. */
    private Unanswered oldestUnanswered() {
        Unanswered head;
        while ((head = unanswered.peek()) != null && head.settled.isDone()) {
            unanswered.remove(head);
        }
        return head;
    }

    private void expireUnanswered() {
        expiryScheduled.set(false);
        long now = time.nanoTime();
        Unanswered head;
        while ((head = unanswered.peek()) != null && (head.result.isDone() || head.deadlineNanos - now <= 0)) {
            if (!head.result.isDone()) {
                trackLateAnswer(head);
            }
            head.result.completeExceptionally(new NoAnswer(head.what(), operationTimeout));
            unanswered.remove(head);
        }
        scheduleExpiry();
    }

    /**
     * Keeps a failed call in view until the store's answer to it has been handled, so that close() also
     * waits (within its bound) for the reactions to a late answer: releasing a late grant, cancelling a
     * late subscription.
     */
    private void trackLateAnswer(Unanswered call) {
        lateAnswers.add(call.answered);
        call.answered.whenComplete((v, e) -> lateAnswers.remove(call.answered));
    }

    /**
     * Hands the store's answer to the caller; if the call had already failed (timed out, or the client
     * closed), hands it to {@code lateAnswer} instead. Which of the two gets a grant is decided by who
     * completes {@code result} first, so a grant is never both the caller's and given back.
     */
    private static <T> void settle(
            CompletableFuture<T> result,
            Consumer<? super T> lateAnswer,
            String verb,
            String name,
            String detail,
            T value,
            Throwable error) {
        if (error != null) {
            result.completeExceptionally(storeFailure(what(verb, name, detail), error));
        } else if (!result.complete(value) && lateAnswer != null) {
            lateAnswer.accept(value);
        }
    }

    /** A store call not answered within the operation timeout (the store may have acted on it all the same). */
    public static final class NoAnswer extends LockBackendException {
        private static final long serialVersionUID = 1L;

        NoAnswer(String what, Duration operationTimeout) {
            super(what + ": the store did not answer within " + operationTimeout);
        }
    }

    /**
     * A store call's failure as the engine reports it: a {@link LockException} as is, anything else wrapped.
     *
     * @param what the call, as in {@code acquire 'name'}
     * @param error the failure
     * @return the exception to throw
     */
    public static LockException storeFailure(String what, Throwable error) {
        Throwable cause = error instanceof CompletionException && error.getCause() != null ? error.getCause() : error;
        if (cause instanceof LockException e) {
            return e;
        }
        if (cause instanceof TimeoutException) {
            return new LockBackendException(what + ": the store timed out", cause);
        }
        return new LockBackendException(what + ": " + cause, cause);
    }

    /**
     * Waits, up to the operation timeout, until the store has answered every call sent and the reactions
     * to the answers ran: the releases, and acquires on their way, whose grants are then released while
     * the backend is still open.
     *
     * <p>Why nothing is missed: {@code sending} counts calls not yet tracked here, and is read before the
     * tracked calls are looked at. A call that starts later is sent by the reaction to an answer (which
     * runs before its own call counts as settled, so that call was still pending), by a timer or a user
     * thread (which send no acquire any more: the client is closing, see {@link Store}).
     *
     * @param sending how many calls are on their way to being tracked
     */
    void awaitAnswers(IntSupplier sending) {
        long until = time.nanoTime() + timeoutNanos;
        while (true) {
            int onTheirWay = sending.getAsInt();
            CompletableFuture<?>[] pending = java.util.stream.Stream.concat(
                            unanswered.stream().map(u -> u.settled), lateAnswers.stream())
                    .filter(f -> !f.isDone())
                    .toArray(CompletableFuture[]::new);
            long left = until - time.nanoTime();
            if ((pending.length == 0 && onTheirWay == 0) || left <= 0) {
                return;
            }
            if (pending.length == 0) {
                LockSupport.parkNanos(PEEK_NANOS); // a call is being handed to the backend: tracked in a moment
                continue;
            }
            try {
                CompletableFuture.allOf(pending).get(left, TimeUnit.NANOSECONDS);
            } catch (InterruptedException e) {
                Thread.currentThread().interrupt();
                return;
            } catch (ExecutionException e) {
                // A failed call has settled too; look again for calls it started.
            } catch (TimeoutException e) {
                return;
            }
        }
    }
}
