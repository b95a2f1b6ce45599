package dev.dlock;

import java.time.Duration;
import java.util.ArrayDeque;
import java.util.Objects;
import java.util.Optional;
import java.util.concurrent.CancellationException;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.CompletionException;
import java.util.concurrent.ExecutionException;
import java.util.concurrent.Executor;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.TimeoutException;

/**
 * A candidate of a {@link LeaderElection}, built on the public lock API alone: a term is a lease of an
 * exclusive lock, so one leader at a time, increasing terms and "the holder is told" come from the lock.
 *
 * <p>Design: the candidate is a small state machine under this object's monitor: idle (not joined),
 * campaigning (one {@code acquireAsync} on its way in {@link #attempt}), or leading ({@link #term}).
 * Every completion checks that it belongs to the current attempt or term; a grant that arrives for an
 * attempt the candidate gave up on (it resigned meanwhile) is released at once. A wait in the store lasts
 * {@link #ROUND} and is then entered again, so a campaign has no end but needs no unbounded wait; a store
 * failure is retried after {@link #RETRY_PAUSE}.
 *
 * <p>Concurrency: state changes happen under the monitor; the listener and the futures handed to callers
 * are completed outside it, listener calls one at a time and in order through {@link #events}. The
 * completions of a wait and of a term's lost signal are handled on the common pool, never on the thread
 * that completed them (a store client's I/O thread must not run a listener or wait for a release).
 *
 * <p>Failure modes: a closed client ends the campaign (the {@link #join()} future fails with the client's
 * {@link LockException}); store failures and timeouts of a round only delay it.
 */
final class Campaign implements LeaderElection {
    static final Duration ROUND = Duration.ofHours(1);
    static final Duration RETRY_PAUSE = Duration.ofSeconds(1);

    private final DistributedLock lock;
    private final Listener listener;
    private final Executor retryLater =
            CompletableFuture.delayedExecutor(RETRY_PAUSE.toMillis(), TimeUnit.MILLISECONDS);
    private final ArrayDeque<Runnable> events = new ArrayDeque<>();
    private boolean delivering;

    private boolean campaigning;
    private CompletableFuture<Lease> attempt;
    private Lease term;
    private CompletableFuture<Lease> elected = new CompletableFuture<>();

    Campaign(DistributedLock lock, Listener listener) {
        this.lock = lock;
        this.listener = Objects.requireNonNull(listener, "listener must not be null");
    }

    @Override
    public String name() {
        return lock.name();
    }

    @Override
    public CompletableFuture<Lease> join() {
        synchronized (this) {
            if (term != null && term.isValid()) {
                return CompletableFuture.completedFuture(term);
            }
            if (elected.isDone()) {
                elected = new CompletableFuture<>();
            }
            if (!campaigning) {
                campaigning = true;
                campaign();
            }
            // else: waiting in the store, or the term just ended and termEnded() is about to stand again
            return elected.copy();
        }
    }

    @Override
    public Lease awaitLeadership(Duration wait) {
        Objects.requireNonNull(wait, "wait must not be null");
        if (wait.isNegative()) {
            throw new IllegalArgumentException("wait must not be negative, got " + wait);
        }
        CompletableFuture<Lease> next = join();
        try {
            return next.get(Math.min(wait.toNanos(), Long.MAX_VALUE), TimeUnit.NANOSECONDS);
        } catch (TimeoutException e) {
            throw new LockTimeoutException("not elected leader of '" + name() + "' within " + wait);
        } catch (InterruptedException e) {
            Thread.currentThread().interrupt();
            throw new LockException("interrupted while waiting to lead '" + name() + "'", e);
        } catch (ExecutionException e) {
            throw asLockException(e.getCause());
        }
    }

    @Override
    public synchronized Optional<Lease> term() {
        return term != null && term.isValid() ? Optional.of(term) : Optional.empty();
    }

    @Override
    public boolean isLeader() {
        return term().isPresent();
    }

    @Override
    public void resign() {
        Lease ended;
        CompletableFuture<Lease> waiting;
        synchronized (this) {
            campaigning = false;
            if (attempt != null) {
                attempt.cancel(true);
                attempt = null;
            }
            ended = term;
            term = null;
            waiting = elected;
        }
        waiting.cancel(false);
        if (ended != null) {
            deliver(() -> listener.deposed(ended, null));
            ended.close();
        }
    }

    @Override
    public void close() {
        resign();
    }

    @Override
    public synchronized String toString() {
        return "LeaderElection[" + name() + ", "
                + (term != null ? "leader, term " + term.fencingToken() : campaigning ? "campaigning" : "idle") + "]";
    }

    /** Starts one wait in the store; called under the monitor while campaigning. */
    private void campaign() {
        CompletableFuture<Lease> next;
        try {
            next = lock.acquireAsync(ROUND);
        } catch (LockException closed) {
            campaigning = false;
            elected.completeExceptionally(closed);
            return;
        }
        attempt = next;
        // Async: the grant may complete on a store client's thread, which must not run the listener nor
        // block in the close() of a grant that came too late.
        next.whenCompleteAsync((lease, error) -> settle(next, lease, error));
    }

    private void settle(CompletableFuture<Lease> settled, Lease lease, Throwable error) {
        CompletableFuture<Lease> toComplete = null;
        synchronized (this) {
            if (settled == attempt) {
                attempt = null;
                if (lease != null) {
                    term = lease;
                    toComplete = elected;
                } else {
                    retryOrStop(unwrap(error));
                }
            }
        }
        if (lease == null) {
            return;
        }
        if (toComplete == null) {
            lease.close(); // the candidate resigned while this grant was on its way
            return;
        }
        deliver(() -> listener.elected(lease));
        toComplete.complete(lease);
        lease.whenLost().whenCompleteAsync((reason, closed) -> termEnded(lease, reason));
    }

    /** After a wait that ended without a grant; under the monitor. */
    private void retryOrStop(Throwable cause) {
        if (cause instanceof LockTimeoutException) {
            campaign();
        } else if (cause instanceof LockBackendException || cause instanceof LockRejectedException) {
            CompletableFuture<Lease> pause = new CompletableFuture<>();
            attempt = pause;
            retryLater.execute(() -> retry(pause));
        } else {
            campaigning = false;
            elected.completeExceptionally(cause);
        }
    }

    private void retry(CompletableFuture<Lease> pause) {
        synchronized (this) {
            if (pause != attempt) {
                return; // resigned during the pause
            }
            campaign();
        }
    }

    /** The term was lost, or its lease closed by the leader (not through resign): tell, and stand again. */
    private void termEnded(Lease ended, LeaseLostException reason) {
        synchronized (this) {
            if (term != ended) {
                return; // resigned: resign() told the listener
            }
            term = null;
            if (campaigning) {
                if (elected.isDone()) {
                    elected = new CompletableFuture<>();
                }
                campaign();
            }
        }
        deliver(() -> listener.deposed(ended, reason));
    }

    /** Runs listener calls one at a time, in the order they were handed in, on the calling threads. */
    private void deliver(Runnable event) {
        synchronized (events) {
            events.add(event);
            if (delivering) {
                return;
            }
            delivering = true;
        }
        while (true) {
            Runnable next;
            synchronized (events) {
                next = events.poll();
                if (next == null) {
                    delivering = false;
                    return;
                }
            }
            try {
                next.run();
            } catch (RuntimeException ignored) {
                // a listener's exception must not stop the campaign
            }
        }
    }

    private static Throwable unwrap(Throwable error) {
        return error instanceof CompletionException && error.getCause() != null ? error.getCause() : error;
    }

    private LockException asLockException(Throwable cause) {
        if (cause instanceof LockException e) {
            return e;
        }
        if (cause instanceof CancellationException) {
            return new LockException("resigned from '" + name() + "' while waiting to lead", cause);
        }
        return new LockException("could not lead '" + name() + "'", cause);
    }
}
