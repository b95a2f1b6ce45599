package dev.dlock.tck;

import dev.dlock.LockInfo;
import dev.dlock.spi.AcquireRequest;
import dev.dlock.spi.AcquireResult;
import dev.dlock.spi.LockBackend;
import dev.dlock.spi.LockKey;
import dev.dlock.spi.RenewRequest;
import dev.dlock.spi.WakeListener;
import java.util.List;
import java.util.Set;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.CompletionStage;
import java.util.function.Supplier;

/**
 * Wraps a backend so that one client can be made to "crash": after {@link #freeze()} no request from
 * this client reaches the store any more (each gets a stage that never completes), exactly what the store
 * sees of a process that died. Other clients of the same store are unaffected. Install it with {@code
 * LockClient.Builder.backendDecorator(b -> new FreezableBackend(b))}.
 */
public final class FreezableBackend implements LockBackend {
    private final LockBackend delegate;
    private volatile boolean frozen;

    /**
     * Wraps a backend.
     *
     * @param delegate the real backend
     */
    public FreezableBackend(LockBackend delegate) {
        this.delegate = delegate;
    }

    /** From now on, nothing reaches the store. */
    public void freeze() {
        frozen = true;
    }

    private <T> CompletionStage<T> pass(Supplier<CompletionStage<T>> call) {
        return frozen ? new CompletableFuture<>() : call.get();
    }

    @Override
    public CompletionStage<AcquireResult> acquire(AcquireRequest request) {
        return pass(() -> delegate.acquire(request));
    }

    @Override
    public CompletionStage<Boolean> release(LockKey key, String owner) {
        return pass(() -> delegate.release(key, owner));
    }

    @Override
    public CompletionStage<Set<String>> renew(List<RenewRequest> batch) {
        return pass(() -> delegate.renew(batch));
    }

    @Override
    public CompletionStage<Void> cancelWait(LockKey key, String owner) {
        return pass(() -> delegate.cancelWait(key, owner));
    }

    @Override
    public CompletionStage<Subscription> subscribe(LockKey key, WakeListener listener) {
        return pass(() -> delegate.subscribe(key, next -> {
            if (!frozen) {
                listener.wake(next);
            }
        }));
    }

    @Override
    public boolean leasesValid() {
        return delegate.leasesValid();
    }

    @Override
    public CompletionStage<LockInfo> describe(LockKey key) {
        return pass(() -> delegate.describe(key));
    }

    @Override
    public CompletionStage<List<LockInfo>> list(String namespace, String prefix) {
        return pass(() -> delegate.list(namespace, prefix));
    }

    @Override
    public CompletionStage<Boolean> forceRelease(LockKey key) {
        return pass(() -> delegate.forceRelease(key));
    }

    @Override
    public void close() {
        delegate.close();
    }
}
