package dev.dlock.redis;

import dev.dlock.LockBackendException;
import java.util.ArrayList;
import java.util.List;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.CompletionException;
import java.util.concurrent.CompletionStage;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.TimeoutException;
import java.util.concurrent.locks.ReentrantLock;
import java.util.function.Function;
import java.util.function.Predicate;
import java.util.function.Supplier;

/**
 * One request sent to every Redlock master, and the tally of their answers.
 *
 * <p>Each master's answer is a yes (the predicate holds: granted, or simply answered), a no (answered
 * otherwise: busy), or a failure (error, refusal, or no answer within the per-master timeout). The round
 * is decided as soon as the outcome cannot change: {@link Outcome#QUORUM} once a majority said yes,
 * {@link Outcome#UNREACHABLE} once a majority failed, {@link Outcome#SHORT} once a majority answered but
 * yes can no longer reach a majority. Answers that arrive after the decision are still recorded (and
 * {@link #settled()} completes when every master has answered or timed out), so a caller can undo them.
 *
 * <p>Concurrency: answers arrive on Lettuce threads; the tally changes under a lock, and the decision
 * future is completed outside it. Failure modes: none of its own; every master's stage is bounded by the
 * per-master timeout, so a round always settles.
 */
final class Round<T> {
    enum Outcome {
        QUORUM,
        SHORT,
        UNREACHABLE
    }

    private final List<String> masters;
    private final int quorum;
    private final Predicate<T> yes;
    private final Function<T, String> label;
    private final long timeoutMillis;
    private final Object[] values;
    private final String[] failures;
    /** Each master's answer or its timeout, whichever came first: see {@link #after}. */
    private final CompletableFuture<?>[] recorded;

    private final ReentrantLock lock = new ReentrantLock();
    private final CompletableFuture<Outcome> decided = new CompletableFuture<>();
    private final CompletableFuture<Round<T>> settled = new CompletableFuture<>();
    private int yesCount;
    private int noCount;
    private int failedCount;

    private Round(List<String> masters, int quorum, Predicate<T> yes, Function<T, String> label, long timeoutMillis) {
        this.masters = masters;
        this.quorum = quorum;
        this.yes = yes;
        this.label = label;
        this.timeoutMillis = timeoutMillis;
        this.values = new Object[masters.size()];
        this.failures = new String[masters.size()];
        this.recorded = new CompletableFuture<?>[masters.size()];
    }

    /**
     * Sends one request per master and tallies the answers.
     *
     * @param request makes master {@code i}'s request; may throw, which counts as that master's failure
     */
    static <T> Round<T> send(
            List<String> masters,
            int quorum,
            long timeoutMillis,
            Predicate<T> yes,
            Function<T, String> label,
            Function<Integer, CompletionStage<T>> request) {
        Round<T> round = new Round<>(masters, quorum, yes, label, timeoutMillis);
        for (int i = 0; i < masters.size(); i++) {
            int master = i;
            CompletableFuture<T> answer;
            try {
                answer = request.apply(i).toCompletableFuture();
            } catch (RuntimeException e) {
                answer = CompletableFuture.failedFuture(e);
            }
            // A copy times out, not the answer itself, so that actions chained to the answer still run
            // when it arrives late (a late subscription is cancelled, a late refused grant released).
            CompletableFuture<T> answerOrTimeout = answer.copy().orTimeout(timeoutMillis, TimeUnit.MILLISECONDS);
            round.recorded[i] = answerOrTimeout;
            answerOrTimeout.whenComplete((value, error) -> round.answer(master, value, error));
        }
        return round;
    }

    /** Every master answered "yes" once it answered at all (release, describe, write-back ...). */
    static <T> Round<T> send(
            List<String> masters, int quorum, long timeoutMillis, Function<Integer, CompletionStage<T>> request) {
        return send(masters, quorum, timeoutMillis, value -> true, value -> "answered", request);
    }

    private void answer(int master, T value, Throwable error) {
        Outcome outcome = null;
        boolean all;
        lock.lock();
        try {
            if (error != null) {
                failures[master] = describe(error);
                failedCount++;
            } else {
                values[master] = value;
                if (yes.test(value)) {
                    yesCount++;
                } else {
                    noCount++;
                }
            }
            int pending = masters.size() - yesCount - noCount - failedCount;
            if (yesCount >= quorum) {
                outcome = Outcome.QUORUM;
            } else if (failedCount >= quorum) {
                outcome = Outcome.UNREACHABLE;
            } else if (yesCount + pending < quorum && yesCount + noCount >= quorum) {
                outcome = Outcome.SHORT;
            }
            all = pending == 0;
        } finally {
            lock.unlock();
        }
        if (outcome != null) {
            decided.complete(outcome);
        }
        if (all) {
            settled.complete(this);
        }
    }

    private String describe(Throwable error) {
        Throwable cause = error instanceof CompletionException && error.getCause() != null ? error.getCause() : error;
        if (cause instanceof TimeoutException) {
            return "timeout (no answer within " + timeoutMillis + "ms)";
        }
        if (cause instanceof Refused) {
            return "refused (" + cause.getMessage() + ")";
        }
        String message = cause.getMessage();
        return "error (" + (message == null ? cause.getClass().getSimpleName() : message) + ")";
    }

    /**
     * Sends a follow-up to master {@code i} once that master answered this round's request, failed or
     * timed out, not before. Netty writes a command issued on one of its event-loop threads at once but
     * queues a command issued on any other thread, and a round is decided on an event-loop thread, so a
     * follow-up sent straight from the decision could reach a slow master ahead of the request it follows
     * (a queue entry left behind its "leave the queue", a grant made after its release). After a timeout
     * the follow-up goes at once, as the request was written long before; waiting for the late answer
     * instead could let the follow-up overtake the caller's next request with the same owner.
     */
    <R> CompletionStage<R> after(int master, Supplier<CompletionStage<R>> followUp) {
        CompletableFuture<?> answer = recorded[master];
        if (answer.isDone()) {
            return followUp.get();
        }
        return answer.handle((value, error) -> null).thenCompose(answered -> followUp.get());
    }

    /** Completes with the outcome as soon as it is certain. */
    CompletableFuture<Outcome> decided() {
        return decided;
    }

    /** Completes when every master has answered or timed out. */
    CompletableFuture<Round<T>> settled() {
        return settled;
    }

    /** The yes answers so far. */
    List<T> yesValues() {
        List<T> result = new ArrayList<>();
        lock.lock();
        try {
            for (Object value : values) {
                @SuppressWarnings("unchecked")
                T typed = (T) value;
                if (value != null && yes.test(typed)) {
                    result.add(typed);
                }
            }
        } finally {
            lock.unlock();
        }
        return result;
    }

    /** Master {@code i}'s answer, or null when it failed or has not answered. */
    @SuppressWarnings("unchecked")
    T value(int master) {
        lock.lock();
        try {
            return (T) values[master];
        } finally {
            lock.unlock();
        }
    }

    int size() {
        return masters.size();
    }

    int failed() {
        lock.lock();
        try {
            return failedCount;
        } finally {
            lock.unlock();
        }
    }

    /** Each master and what it answered, e.g. {@code "a:1 granted(17), b:2 busy, c:3 timeout (...)"}. */
    String answers() {
        StringBuilder text = new StringBuilder();
        lock.lock();
        try {
            for (int i = 0; i < masters.size(); i++) {
                if (i > 0) {
                    text.append(", ");
                }
                text.append(masters.get(i)).append(' ');
                if (failures[i] != null) {
                    text.append(failures[i]);
                } else if (values[i] != null) {
                    @SuppressWarnings("unchecked")
                    T value = (T) values[i];
                    text.append(label.apply(value));
                } else {
                    text.append("no answer yet");
                }
            }
        } finally {
            lock.unlock();
        }
        return text.toString();
    }

    /** The failure of an operation that did not reach a majority: lists every master's answer. */
    LockBackendException unreachable(String what) {
        return new LockBackendException("Redlock " + what + ": fewer than a majority (" + quorum + " of "
                + masters.size() + ") of the masters answered: " + answers());
    }

    /** A master that answered but must not be counted (for example restarted too recently). */
    static final class Refused extends RuntimeException {
        private static final long serialVersionUID = 1L;

        Refused(String message) {
            super(message, null, false, false);
        }
    }
}
