package dev.dlock.internal;

import dev.dlock.LockBackendException;
import dev.dlock.LockException;
import dev.dlock.LockInfo;
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
import java.util.concurrent.ScheduledFuture;
import java.util.concurrent.ScheduledThreadPoolExecutor;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.atomic.AtomicInteger;

/**
 * The engine's one way to its store: every {@link LockBackend} call, each bounded by the operation timeout
 * ({@link StoreCalls}), and the client's one scheduler thread, which serves those timeouts and every timer
 * of the engine.
 *
 * <p>Design: one method per store operation, so no caller holds the backend and no caller can forget the
 * timeout. A call is described by a verb, a name and a detail, joined into a message only when it fails,
 * so the hot path builds no strings. An answer that arrives after its call timed out is undone here
 * ({@link #undo}): a late grant is released, a late subscription cancelled, so nothing stays held for a
 * caller that is gone.
 *
 * <p>Closing: {@link #isClosed()} turns true when the client starts closing, before anything is released;
 * from then on nothing new is started, and {@link #close} stops the scheduler and closes the backend once
 * calls on their way have settled ({@link #awaitAnswers}).
 */
final class Store {
    private static final AtomicInteger CLIENTS = new AtomicInteger();

    private final ScheduledThreadPoolExecutor scheduler;
    private final StoreCalls calls;
    private final long timeoutNanos;
    /** Set once by {@link #open}, before the engine is published; read by every call. */
    private LockBackend backend;

    private volatile boolean closed;

    Store(Duration operationTimeout) {
        int id = CLIENTS.incrementAndGet();
        this.scheduler = new ScheduledThreadPoolExecutor(1, r -> {
            Thread t = new Thread(r, "dlock-scheduler-" + id);
            t.setDaemon(true);
            return t;
        });
        scheduler.setRemoveOnCancelPolicy(true);
        scheduler.setExecuteExistingDelayedTasksAfterShutdownPolicy(false);
        this.calls = new StoreCalls(scheduler, operationTimeout);
        this.timeoutNanos = operationTimeout.toNanos();
    }

    /**
     * Opens the backend; on failure stops the scheduler and throws.
     *
     * @throws LockException as the factory threw it, or wrapping what else it threw
     */
    void open(LockBackendFactory factory, BackendContext context) {
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
     * Sends one acquire attempt. If the attempt times out and the store answers it later, that answer is
     * undone ({@link #undo}).
     */
    CompletableFuture<AcquireResult> acquire(AcquireRequest request) {
        String name = request.key().name();
        CompletionStage<AcquireResult> sent;
        try {
            sent = backend.acquire(request);
        } catch (RuntimeException e) {
            return StoreCalls.failed("acquire", name, "", e);
        }
        return calls.track("acquire", name, "", sent, late -> undo(late, request));
    }

    /**
     * Undoes an answer nobody will use: releases a grant, or removes the queue entry a busy answer to a
     * waiting request may have left (the caller's cancelWait may have reached the store before it).
     */
    void undo(AcquireResult answer, AcquireRequest request) {
        if (answer.isGranted()) {
            release(request.key(), request.owner(), " granted too late");
        } else if (request.waiting()) {
            cancelWait(request.key(), request.owner());
        }
    }

    /**
     * Releases a hold.
     *
     * @param why appended to the name in messages, e.g. {@code " again"}; empty for a plain release
     */
    CompletableFuture<Boolean> release(LockKey key, String owner, String why) {
        try {
            return calls.track("release", key.name(), why, backend.release(key, owner));
        } catch (RuntimeException e) {
            return StoreCalls.failed("release", key.name(), why, e);
        }
    }

    /** Removes a waiter's queue entry in the store. */
    CompletableFuture<Void> cancelWait(LockKey key, String owner) {
        try {
            return calls.track("leave the queue of", key.name(), "", backend.cancelWait(key, owner));
        } catch (RuntimeException e) {
            return StoreCalls.failed("leave the queue of", key.name(), "", e);
        }
    }

    /**
     * Renews leases; answers the owners the store no longer held.
     *
     * @param name the lease's name for one lease ({@code extend}), null for a batch
     */
    CompletableFuture<Set<String>> renew(List<RenewRequest> batch, String name) {
        String verb = name != null ? "extend" : "renew " + batch.size() + " leases";
        try {
            return calls.track(verb, name, "", backend.renew(batch));
        } catch (RuntimeException e) {
            return StoreCalls.failed(verb, name, "", e);
        }
    }

    /**
     * Subscribes to wake-ups of a resource. A subscription the store sets up after the call timed out is
     * nobody's and is cancelled.
     */
    CompletableFuture<Subscription> subscribe(LockKey resource, WakeListener listener) {
        CompletionStage<Subscription> sent;
        try {
            sent = backend.subscribe(resource, listener);
        } catch (RuntimeException e) {
            return StoreCalls.failed("subscribe to", resource.name(), "", e);
        }
        return calls.track("subscribe to", resource.name(), "", sent, Subscription::cancel);
    }

    CompletableFuture<LockInfo> describe(LockKey key) {
        try {
            return calls.track("describe", key.name(), "", backend.describe(key));
        } catch (RuntimeException e) {
            return StoreCalls.failed("describe", key.name(), "", e);
        }
    }

    CompletableFuture<List<LockInfo>> list(String namespace, String prefix) {
        try {
            return calls.track("list", null, "", backend.list(namespace, prefix));
        } catch (RuntimeException e) {
            return StoreCalls.failed("list", null, "", e);
        }
    }

    CompletableFuture<Boolean> forceRelease(LockKey key) {
        try {
            return calls.track("force-release", key.name(), "", backend.forceRelease(key));
        } catch (RuntimeException e) {
            return StoreCalls.failed("force-release", key.name(), "", e);
        }
    }

    // ---- what the backend says without a call

    /** {@link LockBackend#leasesValid()}: false while a session store's session is not live. */
    boolean leasesValid() {
        return backend.leasesValid();
    }

    boolean supports(Mode mode) {
        return backend.supports(mode);
    }

    long tokenBlock() {
        return backend.tokenBlock();
    }

    // ---- timers and closing

    /**
     * Runs a task on the scheduler thread after a delay.
     *
     * @return the timer, or null when the client is closed (the task's owner is failed by close())
     */
    ScheduledFuture<?> schedule(Runnable task, long delayNanos) {
        try {
            return scheduler.schedule(task, Math.max(0, delayNanos), TimeUnit.NANOSECONDS);
        } catch (RejectedExecutionException e) {
            return null;
        }
    }

    boolean isClosed() {
        return closed;
    }

    /**
     * Marks the client closing: nothing new starts.
     *
     * @return false if it was already closing
     */
    boolean startClosing() {
        if (closed) {
            return false;
        }
        closed = true;
        return true;
    }

    /** Waits, up to the operation timeout, until the store answered every call sent; see {@link StoreCalls}. */
    void awaitAnswers() {
        calls.awaitAnswers();
    }

    /** Stops the scheduler and closes the backend; waits up to the operation timeout for the scheduler. */
    void close() {
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

    /** The backend's class, for {@code LockClient.toString()}. */
    String backendType() {
        return backend.getClass().getSimpleName();
    }

    /** The backend's own description, for messages. */
    @Override
    public String toString() {
        return backend.toString();
    }
}
