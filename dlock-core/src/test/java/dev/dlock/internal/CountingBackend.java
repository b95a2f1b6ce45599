package dev.dlock.internal;

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
import java.util.concurrent.TimeUnit;
import java.util.concurrent.atomic.AtomicInteger;

/** Counts the engine's calls into a real backend, and can delay acquire answers; forwards everything else. */
final class CountingBackend extends ForwardingLockBackend {
    final AtomicInteger acquires = new AtomicInteger();
    /** Acquire answers that were grants. */
    final AtomicInteger grants = new AtomicInteger();

    final AtomicInteger releases = new AtomicInteger();
    final AtomicInteger subscribes = new AtomicInteger();
    final List<Integer> renewBatches = new CopyOnWriteArrayList<>();
    volatile long acquireDelayMillis;
    /** When set, acquires reach the store only once it completes (after any delay). */
    volatile CompletableFuture<Void> acquireGate;

    CountingBackend(LockBackend delegate) {
        super(delegate);
    }

    @Override
    public CompletionStage<AcquireResult> acquire(AcquireRequest request) {
        acquires.incrementAndGet();
        long delay = acquireDelayMillis;
        CompletableFuture<Void> gate = acquireGate;
        CompletionStage<AcquireResult> answer;
        if (gate != null) {
            answer = gate.thenCompose(x -> delegate.acquire(request));
        } else if (delay == 0) {
            answer = delegate.acquire(request);
        } else {
            answer = CompletableFuture.supplyAsync(
                            () -> null, CompletableFuture.delayedExecutor(delay, TimeUnit.MILLISECONDS))
                    .thenCompose(x -> delegate.acquire(request));
        }
        return answer.thenApply(result -> {
            if (result.isGranted()) {
                grants.incrementAndGet();
            }
            return result;
        });
    }

    @Override
    public CompletionStage<Boolean> release(LockKey key, String owner) {
        releases.incrementAndGet();
        return delegate.release(key, owner);
    }

    @Override
    public CompletionStage<Set<String>> renew(List<RenewRequest> batch) {
        renewBatches.add(batch.size());
        return delegate.renew(batch);
    }

    @Override
    public CompletionStage<Subscription> subscribe(LockKey key, WakeListener listener) {
        subscribes.incrementAndGet();
        return delegate.subscribe(key, listener);
    }
}
