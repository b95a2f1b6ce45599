package dev.dlock.internal.store;

import dev.dlock.LockBackendException;
import dev.dlock.LockException;
import dev.dlock.LockInfo;
import dev.dlock.internal.base.Timebase;
import dev.dlock.spi.AcquireRequest;
import dev.dlock.spi.AcquireResult;
import dev.dlock.spi.BackendContext;
import dev.dlock.spi.LockBackend;
import dev.dlock.spi.LockBackend.Subscription;
import dev.dlock.spi.LockBackendFactory;
import dev.dlock.spi.LockKey;
import dev.dlock.spi.Mode;
import dev.dlock.spi.RenewRequest;
import dev.dlock.spi.WakeListener;
import java.time.Duration;
import java.util.List;
import java.util.Set;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.CompletionStage;
import java.util.concurrent.RejectedExecutionException;
import java.util.concurrent.ScheduledExecutorService;
import java.util.concurrent.ScheduledFuture;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.atomic.AtomicInteger;
import java.util.function.BiConsumer;
import java.util.function.Consumer;
import java.util.function.Supplier;

/**
 * The engine's one way to its store: every {@link LockBackend} call, each bounded by the operation timeout
 * ({@link StoreCalls}), and the client's one scheduler, which serves those timeouts and every timer of the
 * engine, and its one clock ({@link Timebase}).
 *
 * <p>Design: one method per store operation, so no caller holds the backend and no caller can forget the
 * timeout. A call is described by a verb, a name and a detail, joined into a message only when it fails,
 * so the hot path builds no strings. An answer that arrives after its call timed out is undone here
 * ({@link #undo}): a late grant is released, a late subscription cancelled, so nothing stays held for a
 * caller that is gone.
 *
 * <p>Closing: {@link #isClosed()} turns true when the client starts closing, before anything is released;
 * from then on no acquire reaches the store (one sent later could be granted after close() stopped
 * waiting), and {@link #close} stops the scheduler and closes the backend once calls on their way have
 * settled ({@link #awaitAnswers}). "On their way" starts before a call reaches the backend: a thread that
 * decided to send an acquire just before the client started closing is counted while it sends, and a
 * caller's reaction to an answer (releasing a grant that came too late) is part of the call, so the
 * releases it sends are waited for too.
 */
public final class Store {
    private static final AtomicInteger CLIENTS = new AtomicInteger();

    private final Timebase time;
    private final ScheduledExecutorService scheduler;
    private final StoreCalls calls;
    private final Retries retries = new Retries(this::schedule, this::isClosed);
    private final long timeoutNanos;
    /** Set once by {@link #open}, before the engine is published; read by every call. */
    private LockBackend backend;

    private volatile boolean closed;
    /** Calls between entering {@link #call} and being tracked; close() waits for them. */
    private final AtomicInteger sending = new AtomicInteger();

    /**
     * A store route for one client, with its scheduler thread; the backend is opened by {@link #open}.
     *
     * @param operationTimeout bounds every store call
     * @param time the client's clock and the source of its scheduler
     */
    public Store(Duration operationTimeout, Timebase time) {
        this.time = time;
        this.scheduler = time.newScheduler(CLIENTS.incrementAndGet());
        this.calls = new StoreCalls(scheduler, time, operationTimeout);
        this.timeoutNanos = operationTimeout.toNanos();
    }

    /**
     * Opens the backend; on failure stops the scheduler and throws.
     *
     * @throws LockException as the factory threw it, or wrapping what else it threw
     * @param factory opens the backend
     * @param context handed to the factory
     */
    public void open(LockBackendFactory factory, BackendContext context) {
        try {
            backend = factory.open(context);
        } catch (RuntimeException e) {
            scheduler.shutdownNow();
            throw e instanceof LockException || e instanceof IllegalArgumentException
                    ? e
                    : new LockBackendException("could not open the store: " + e, e);
        }
    }

    // ---- store calls

    /**
     * Sends one acquire attempt; {@code reaction} gets its answer. If the attempt times out and the store
     * answers it later, that answer is undone ({@link #undo}). Refused without reaching the store once the
     * client is closing ({@link NotSent}): a grant asked for then could arrive after close() stopped
     * waiting for answers, and nobody would give it back.
     *
     * @param request the attempt
     * @param reaction gets the answer or the failure
     */
    public void acquire(AcquireRequest request, BiConsumer<? super AcquireResult, ? super Throwable> reaction) {
        call(
                true,
                "acquire",
                request.key().name(),
                "",
                () -> backend.acquire(request),
                late -> undo(late, request),
                reaction);
    }

    /**
     * Undoes an answer nobody will use: gives back a grant, or removes the queue entry a busy answer to a
     * waiting request may have left (the caller's cancelWait may have reached the store before it).
     *
     * @param answer the answer nobody will use
     * @param request the request it answered
     */
    public void undo(AcquireResult answer, AcquireRequest request) {
        if (answer.isGranted()) {
            giveBack(request.key(), request.owner(), " granted too late", request.leaseMillis());
        } else if (request.waiting()) {
            leaveQueue(request.key(), request.owner(), request.leaseMillis());
        }
    }

    /**
     * Gives back a hold nobody will use (a grant that came too late, or one an acquire that failed may
     * have left); retried until the store answers or the client closes ({@link Retries}).
     *
     * @param leaseMillis the lease time the hold was asked for: sets the first back-off
     * @param key the resource and mode
     * @param owner the owner id of the hold
     * @param why appended to the name in messages
     * @return completes with the first answer (true if the store held it)
     */
    public CompletableFuture<Boolean> giveBack(LockKey key, String owner, String why, long leaseMillis) {
        return release(key, owner, why, (wasHeld, error) -> {
            if (error != null) {
                retries.untilAnswered(
                        () -> release(key, owner, why + " again"), Retries.firstDelayNanos(leaseMillis), null);
            }
        });
    }

    /**
     * Removes the queue entry of a wait that ended; retried until the store answers or the client closes
     * ({@link Retries}).
     *
     * @param leaseMillis the lease time the wait asked for: sets the first back-off
     * @param key the resource and mode
     * @param owner the owner id of the wait
     */
    public void leaveQueue(LockKey key, String owner, long leaseMillis) {
        call(false, "leave the queue of", key.name(), "", () -> backend.cancelWait(key, owner), null, (v, error) -> {
            if (error != null) {
                retries.untilAnswered(() -> cancelWait(key, owner), Retries.firstDelayNanos(leaseMillis), null);
            }
        });
    }

    /**
     * Releases a hold the store did not confirm the release of: sent again and again ({@link Retries})
     * until the store answers (held or not) or the client closes.
     *
     * @param key the resource and mode
     * @param owner the owner id of the hold
     * @param leaseMillis the lease time of the hold: sets the first back-off
     * @param answered runs once the store answered
     */
    public void releaseUntilAnswered(LockKey key, String owner, long leaseMillis, Runnable answered) {
        retries.untilAnswered(() -> release(key, owner, " again"), Retries.firstDelayNanos(leaseMillis), answered);
    }

    /**
     * Releases a hold.
     *
     * @param why appended to the name in messages, e.g. {@code " again"}; empty for a plain release
     * @param key the resource and mode
     * @param owner the owner id of the hold
     * @return completes with whether the store held it
     */
    public CompletableFuture<Boolean> release(LockKey key, String owner, String why) {
        return release(key, owner, why, null);
    }

    /**
     * Releases a hold; {@code reaction} gets the answer before close() counts the call as settled, so a
     * call it sends is waited for too.
     *
     * @return completes with the answer after {@code reaction} ran
     * @param key the resource and mode
     * @param owner the owner id of the hold
     * @param why appended to the name in messages
     * @param reaction runs with the answer, or null
     */
    public CompletableFuture<Boolean> release(
            LockKey key, String owner, String why, BiConsumer<? super Boolean, ? super Throwable> reaction) {
        return call(false, "release", key.name(), why, () -> backend.release(key, owner), null, reaction);
    }

    /** Removes a waiter's queue entry in the store. */
    private CompletableFuture<Void> cancelWait(LockKey key, String owner) {
        return call(false, "leave the queue of", key.name(), "", () -> backend.cancelWait(key, owner), null, null);
    }

    /**
     * Renews leases; answers the owners the store no longer held.
     *
     * @param name the lease's name for one lease ({@code extend}), null for a batch
     * @param reaction gets the answer before close() counts the call as settled; null for none
     * @param batch the leases to renew
     * @return completes with the owners the store no longer held
     */
    public CompletableFuture<Set<String>> renew(
            List<RenewRequest> batch, String name, BiConsumer<? super Set<String>, ? super Throwable> reaction) {
        String verb = name != null ? "extend" : "renew " + batch.size() + " leases";
        return call(false, verb, name, "", () -> backend.renew(batch), null, reaction);
    }

    /**
     * Asks whether the store holds a lease now ({@code LockBackend.holds}).
     *
     * @param lease the lease
     * @param reaction gets the answer before close() counts the call as settled
     * @return completes with true if the store holds it
     */
    public CompletableFuture<Boolean> holds(
            RenewRequest lease, BiConsumer<? super Boolean, ? super Throwable> reaction) {
        return call(false, "confirm", lease.key().name(), "", () -> backend.holds(lease), null, reaction);
    }

    /**
     * Subscribes to wake-ups of a resource. A subscription the store sets up after the call timed out is
     * nobody's and is cancelled.
     *
     * @param resource the resource
     * @param listener gets the wake-ups
     * @return completes with the live subscription
     */
    public CompletableFuture<Subscription> subscribe(LockKey resource, WakeListener listener) {
        return call(
                false,
                "subscribe to",
                resource.name(),
                "",
                () -> backend.subscribe(resource, listener),
                Subscription::cancel,
                null);
    }

    /**
     * Describes one key.
     *
     * @param key the resource and mode
     * @return completes with who holds and waits
     */
    public CompletableFuture<LockInfo> describe(LockKey key) {
        return call(false, "describe", key.name(), "", () -> backend.describe(key), null, null);
    }

    /**
     * Lists held resources.
     *
     * @param namespace the namespace
     * @param prefix a name prefix
     * @return completes with the held resources
     */
    public CompletableFuture<List<LockInfo>> list(String namespace, String prefix) {
        return call(false, "list", null, "", () -> backend.list(namespace, prefix), null, null);
    }

    /**
     * Asks how long grants in a namespace are held back after the store may have lost state.
     *
     * @param namespace the namespace
     * @return completes with the time left, zero when not held back
     */
    public CompletableFuture<Duration> heldBack(String namespace) {
        return call(false, "ask the namespace's hold-back", null, "", () -> backend.heldBack(namespace), null, null);
    }

    /**
     * Removes every hold of a key.
     *
     * @param key the resource and mode
     * @return completes with whether anything was removed
     */
    public CompletableFuture<Boolean> forceRelease(LockKey key) {
        return call(false, "force-release", key.name(), "", () -> backend.forceRelease(key), null, null);
    }

    /**
     * Sends one call and puts it in view of close() before anyone else can see it: {@link #sending}
     * counts the call from before it reaches the backend until it is tracked (and, if the answer was
     * there at once, until {@code reaction} ran), so close() never misses a call on its way.
     *
     * @param grants whether the call may create a hold: refused once the client is closing
     */
    private <T> CompletableFuture<T> call(
            boolean grants,
            String verb,
            String name,
            String detail,
            Supplier<CompletionStage<T>> send,
            Consumer<? super T> lateAnswer,
            BiConsumer<? super T, ? super Throwable> reaction) {
        sending.incrementAndGet();
        try {
            CompletionStage<T> sent;
            if (grants && closed) {
                sent = CompletableFuture.failedFuture(new NotSent(StoreCalls.what(verb, name, detail)));
            } else {
                try {
                    sent = send.get();
                } catch (RuntimeException e) {
                    sent = CompletableFuture.failedFuture(e);
                }
            }
            return calls.track(verb, name, detail, sent, lateAnswer, reaction);
        } finally {
            sending.decrementAndGet();
        }
    }

    // ---- what the backend says without a call

    /** {@return {@link LockBackend#leasesValid()}: false while a session store's session is not live} */
    public boolean leasesValid() {
        return backend.leasesValid();
    }

    /**
     * {@link LockBackend#supports}.
     *
     * @param mode a mode
     * @return whether the store offers it
     */
    public boolean supports(Mode mode) {
        return backend.supports(mode);
    }

    /** {@return {@link LockBackend#tokenBlock()}: the room between two store grants' tokens, at least 1} */
    public long tokenBlock() {
        return backend.tokenBlock();
    }

    // ---- time, timers and closing

    /** {@return now on the client's clock ({@link Timebase#nanoTime()}): every engine reading of time} */
    public long nanoTime() {
        return time.nanoTime();
    }

    /**
     * Runs a task on the scheduler thread after a delay.
     *
     * @return the timer, or null when the client is closed (the task's owner is failed by close())
     * @param task the task
     * @param delayNanos the delay
     */
    public ScheduledFuture<?> schedule(Runnable task, long delayNanos) {
        try {
            return scheduler.schedule(task, Math.max(0, delayNanos), TimeUnit.NANOSECONDS);
        } catch (RejectedExecutionException e) {
            return null;
        }
    }

    /** {@return whether the client is closing or closed: true from the start of close()} */
    public boolean isClosed() {
        return closed;
    }

    /**
     * Marks the client closing: nothing new starts.
     *
     * @return false if it was already closing
     */
    public boolean startClosing() {
        if (closed) {
            return false;
        }
        closed = true;
        return true;
    }

    /**
     * Waits, up to the operation timeout, until the store answered every call sent and the reactions to
     * those answers ran, including calls that were on their way to the backend; see {@link StoreCalls}.
     * Called once the client is closing, when no call that could create a hold is sent any more.
     */
    public void awaitAnswers() {
        calls.awaitAnswers(sending::get);
    }

    /**
     * Stops the scheduler and closes the backend; waits up to the operation timeout for the scheduler.
     */
    public void close() {
        scheduler.shutdownNow();
        try {
            backend.close();
        } finally {
            try {
                scheduler.awaitTermination(timeoutNanos, TimeUnit.NANOSECONDS);
            } catch (InterruptedException e) {
                Thread.currentThread().interrupt();
            }
        }
    }

    /** {@return the backend's simple class name, for {@code LockClient.toString()}} */
    public String backendType() {
        return backend.getClass().getSimpleName();
    }

    /** The backend's own description, for messages. */
    @Override
    public String toString() {
        return backend.toString();
    }
}
