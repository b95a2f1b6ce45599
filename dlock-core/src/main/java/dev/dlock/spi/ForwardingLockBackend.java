package dev.dlock.spi;

import dev.dlock.LockInfo;
import java.time.Duration;
import java.util.List;
import java.util.Objects;
import java.util.Set;
import java.util.concurrent.CompletionStage;

/**
 * A backend that hands every call to another one: the base of decorators that count, delay or fail some
 * calls (test kits, benchmarks, metrics) and override only those. Every method of {@link LockBackend},
 * the optional ones included, is forwarded, so a decorator never hides a capability of the store it
 * wraps; {@link #toString()} is the delegate's, so messages still name the store.
 */
public abstract class ForwardingLockBackend implements LockBackend {
    /** The backend every call goes to unless a subclass overrides it. */
    protected final LockBackend delegate;

    /**
     * Wraps a backend.
     *
     * @param delegate the backend to forward to
     */
    protected ForwardingLockBackend(LockBackend delegate) {
        this.delegate = Objects.requireNonNull(delegate, "delegate");
    }

    @Override
    public CompletionStage<AcquireResult> acquire(AcquireRequest request) {
        return delegate.acquire(request);
    }

    @Override
    public CompletionStage<Boolean> release(LockKey key, String owner) {
        return delegate.release(key, owner);
    }

    @Override
    public CompletionStage<Set<String>> renew(List<RenewRequest> batch) {
        return delegate.renew(batch);
    }

    @Override
    public CompletionStage<Boolean> holds(RenewRequest lease) {
        return delegate.holds(lease);
    }

    @Override
    public CompletionStage<Void> cancelWait(LockKey key, String owner) {
        return delegate.cancelWait(key, owner);
    }

    @Override
    public CompletionStage<Subscription> subscribe(LockKey key, WakeListener listener) {
        return delegate.subscribe(key, listener);
    }

    @Override
    public boolean supports(Mode mode) {
        return delegate.supports(mode);
    }

    @Override
    public long tokenBlock() {
        return delegate.tokenBlock();
    }

    @Override
    public boolean leasesValid() {
        return delegate.leasesValid();
    }

    @Override
    public CompletionStage<LockInfo> describe(LockKey key) {
        return delegate.describe(key);
    }

    @Override
    public CompletionStage<List<LockInfo>> list(String namespace, String prefix) {
        return delegate.list(namespace, prefix);
    }

    @Override
    public CompletionStage<Duration> heldBack(String namespace) {
        return delegate.heldBack(namespace);
    }

    @Override
    public CompletionStage<Boolean> forceRelease(LockKey key) {
        return delegate.forceRelease(key);
    }

    @Override
    public void close() {
        delegate.close();
    }

    @Override
    public String toString() {
        return delegate.toString();
    }
}
