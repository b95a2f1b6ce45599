package dev.dlock.internal;

import dev.dlock.LockInfo;
import dev.dlock.spi.AcquireRequest;
import dev.dlock.spi.AcquireResult;
import dev.dlock.spi.ForwardingLockBackend;
import dev.dlock.spi.LockBackend;
import dev.dlock.spi.LockKey;
import dev.dlock.spi.RenewRequest;
import dev.dlock.spi.WakeListener;
import java.util.List;
import java.util.Set;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.CompletionStage;
import java.util.concurrent.CopyOnWriteArrayList;
import java.util.concurrent.CountDownLatch;
import java.util.concurrent.Executors;
import java.util.concurrent.ScheduledExecutorService;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.atomic.AtomicBoolean;
import java.util.concurrent.atomic.AtomicInteger;
import java.util.function.Consumer;
import java.util.function.Supplier;
import java.util.function.ToLongFunction;

/**
 * Wraps a real backend (the memory store) and makes its answers late, the way a slow network makes
 * them late: a delayed operation reaches the store only after its delay, so the store acts on it then.
 * After {@link #close()} every call fails, like a real client whose connections are closed; operations
 * already on their way still reach the store. What it does not override (capabilities such as {@code
 * supports}, {@code tokenBlock}, {@code leasesValid}) is forwarded as is.
 */
final class FaultyBackend extends ForwardingLockBackend {
    private static final ScheduledExecutorService NETWORK = Executors.newScheduledThreadPool(2, r -> {
        Thread t = new Thread(r, "faulty-backend-network");
        t.setDaemon(true);
        return t;
    });

    /** Milliseconds by which each acquire reaches the store late (0: at once, on the caller's thread). */
    volatile ToLongFunction<AcquireRequest> acquireDelay = r -> 0;
    /** Runs on the caller's thread before an acquire is passed on. */
    volatile Consumer<AcquireRequest> beforeAcquire = r -> {};
    /** Runs on the caller's thread before a cancelWait is passed on. */
    volatile Consumer<LockKey> beforeCancelWait = k -> {};
    /** When set, the next renew call is held on its way to the store until {@link #renewGate} opens. */
    volatile boolean holdNextRenew;
    /** Counted down when the held renew call has been received. */
    final CountDownLatch heldRenewReceived = new CountDownLatch(1);
    /** Lets the held renew call reach the store. */
    final CountDownLatch renewGate = new CountDownLatch(1);
    /** Milliseconds by which each subscribe reaches the store late. */
    volatile long subscribeDelayMillis;
    /** How many of the next subscribes are refused at once, as by a client whose connection is down. */
    final AtomicInteger subscribesToRefuse = new AtomicInteger();

    /** Subscriptions the store has set up and nobody has cancelled yet. */
    final AtomicInteger liveSubscriptions = new AtomicInteger();

    /** Acquire requests the store has acted on, in order. */
    final List<AcquireRequest> acquiresAtStore = new CopyOnWriteArrayList<>();

    private volatile boolean closed;

    FaultyBackend(LockBackend delegate) {
        super(delegate);
    }

    private <T> CompletionStage<T> pass(long delayMillis, Supplier<CompletionStage<T>> op) {
        if (closed) {
            return CompletableFuture.failedFuture(new IllegalStateException("backend closed"));
        }
        if (delayMillis <= 0) {
            return op.get();
        }
        CompletableFuture<T> answer = new CompletableFuture<>();
        NETWORK.schedule(
                () -> op.get().whenComplete((v, e) -> {
                    if (e != null) {
                        answer.completeExceptionally(e);
                    } else {
                        answer.complete(v);
                    }
                }),
                delayMillis,
                TimeUnit.MILLISECONDS);
        return answer;
    }

    @Override
    public CompletionStage<AcquireResult> acquire(AcquireRequest request) {
        beforeAcquire.accept(request);
        return pass(acquireDelay.applyAsLong(request), () -> {
            CompletionStage<AcquireResult> answer = delegate.acquire(request);
            acquiresAtStore.add(request);
            return answer;
        });
    }

    @Override
    public CompletionStage<Boolean> release(LockKey key, String owner) {
        return pass(0, () -> delegate.release(key, owner));
    }

    @Override
    public CompletionStage<Set<String>> renew(List<RenewRequest> batch) {
        if (!holdNextRenew) {
            return pass(0, () -> delegate.renew(batch));
        }
        holdNextRenew = false;
        heldRenewReceived.countDown();
        return CompletableFuture.supplyAsync(
                        () -> {
                            try {
                                renewGate.await(30, TimeUnit.SECONDS);
                            } catch (InterruptedException e) {
                                Thread.currentThread().interrupt();
                            }
                            return null;
                        },
                        NETWORK)
                .thenCompose(x -> delegate.renew(batch));
    }

    @Override
    public CompletionStage<Boolean> holds(RenewRequest lease) {
        return pass(0, () -> delegate.holds(lease));
    }

    @Override
    public CompletionStage<Void> cancelWait(LockKey key, String owner) {
        beforeCancelWait.accept(key);
        return pass(0, () -> delegate.cancelWait(key, owner));
    }

    @Override
    public CompletionStage<Subscription> subscribe(LockKey key, WakeListener listener) {
        if (subscribesToRefuse.getAndUpdate(n -> Math.max(0, n - 1)) > 0) {
            return CompletableFuture.failedFuture(new IllegalStateException("Currently not connected (test)"));
        }
        return pass(
                subscribeDelayMillis, () -> delegate.subscribe(key, listener).thenApply(sub -> {
                    liveSubscriptions.incrementAndGet();
                    AtomicBoolean cancelled = new AtomicBoolean();
                    return () -> {
                        if (cancelled.compareAndSet(false, true)) {
                            liveSubscriptions.decrementAndGet();
                        }
                        sub.cancel();
                    };
                }));
    }

    @Override
    public CompletionStage<LockInfo> describe(LockKey key) {
        return pass(0, () -> delegate.describe(key));
    }

    @Override
    public CompletionStage<List<LockInfo>> list(String namespace, String prefix) {
        return pass(0, () -> delegate.list(namespace, prefix));
    }

    @Override
    public CompletionStage<Boolean> forceRelease(LockKey key) {
        return pass(0, () -> delegate.forceRelease(key));
    }

    @Override
    public void close() {
        closed = true;
        delegate.close();
    }
}
