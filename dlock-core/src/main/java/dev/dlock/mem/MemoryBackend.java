package dev.dlock.mem;

import dev.dlock.LockInfo;
import dev.dlock.spi.AcquireRequest;
import dev.dlock.spi.AcquireResult;
import dev.dlock.spi.LockBackend;
import dev.dlock.spi.LockKey;
import dev.dlock.spi.RenewRequest;
import dev.dlock.spi.WakeListener;
import java.time.Duration;
import java.util.List;
import java.util.Set;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.CompletionStage;
import java.util.function.Supplier;

/**
 * One client's connection to a {@link MemoryStore}.
 *
 * <p>Every operation runs synchronously on the caller's thread under the store's lock and returns a
 * completed stage; wake-ups are delivered on the releasing thread after the lock is dropped. While the
 * store is down, stages never complete, exactly like requests to a dead server.
 */
final class MemoryBackend implements LockBackend {
    private final MemoryStore store;

    MemoryBackend(MemoryStore store) {
        this.store = store;
    }

    private <T> CompletionStage<T> run(Supplier<T> op) {
        if (!store.up()) {
            return new CompletableFuture<>(); // a dead server: no answer
        }
        return CompletableFuture.completedFuture(op.get());
    }

    @Override
    public long tokenBlock() {
        return MemoryStore.TOKEN_BLOCK;
    }

    @Override
    public CompletionStage<AcquireResult> acquire(AcquireRequest request) {
        return run(() -> store.acquire(request));
    }

    @Override
    public CompletionStage<Boolean> release(LockKey key, String owner) {
        return run(() -> store.release(key, owner));
    }

    @Override
    public CompletionStage<Set<String>> renew(List<RenewRequest> batch) {
        return run(() -> store.renew(batch));
    }

    @Override
    public CompletionStage<Void> cancelWait(LockKey key, String owner) {
        return run(() -> {
            store.cancelWait(key, owner);
            return null;
        });
    }

    @Override
    public CompletionStage<Subscription> subscribe(LockKey key, WakeListener listener) {
        return run(() -> store.subscribe(key, listener)::run);
    }

    @Override
    public CompletionStage<LockInfo> describe(LockKey key) {
        return run(() -> store.describe(key));
    }

    @Override
    public CompletionStage<List<LockInfo>> list(String namespace, String prefix) {
        return run(() -> store.list(namespace, prefix));
    }

    @Override
    public CompletionStage<Duration> heldBack(String namespace) {
        return run(() -> store.heldBack(namespace));
    }

    @Override
    public CompletionStage<Boolean> forceRelease(LockKey key) {
        return run(() -> store.forceRelease(key));
    }

    @Override
    public void close() {
        // Nothing to close: the store outlives its clients.
    }
}
