package dev.dlock.bench;

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
import java.util.concurrent.CompletionStage;
import java.util.concurrent.atomic.AtomicLong;
import java.util.concurrent.atomic.LongAdder;

/**
 * A {@link LockBackend} decorator (installed with {@code LockBackendFactory.andThen}) that counts
 * the engine's calls into the backend and the leases in renewal batches, changing nothing else.
 *
 * <p>Concurrency: counters are {@link LongAdder}s and {@link AtomicLong}s; the delegate sees every call
 * exactly as the engine made it.
 */
final class CountingBackend extends ForwardingLockBackend {
    /** Shared by every client decorated with the same counters. */
    static final class Counters {
        final LongAdder acquires = new LongAdder();
        final LongAdder releases = new LongAdder();
        final LongAdder renewCalls = new LongAdder();
        final LongAdder renewedLeases = new LongAdder();
        final AtomicLong largestBatch = new AtomicLong();
        final LongAdder other = new LongAdder();

        /** Every call, of any kind. */
        long calls() {
            return acquires.sum() + releases.sum() + renewCalls.sum() + other.sum();
        }
    }

    private final Counters counters;

    CountingBackend(LockBackend delegate, Counters counters) {
        super(delegate);
        this.counters = counters;
    }

    @Override
    public CompletionStage<AcquireResult> acquire(AcquireRequest request) {
        counters.acquires.increment();
        return delegate.acquire(request);
    }

    @Override
    public CompletionStage<Boolean> release(LockKey key, String owner) {
        counters.releases.increment();
        return delegate.release(key, owner);
    }

    @Override
    public CompletionStage<Set<String>> renew(List<RenewRequest> batch) {
        counters.renewCalls.increment();
        counters.renewedLeases.add(batch.size());
        counters.largestBatch.accumulateAndGet(batch.size(), Math::max);
        return delegate.renew(batch);
    }

    @Override
    public CompletionStage<Boolean> holds(RenewRequest lease) {
        counters.other.increment();
        return delegate.holds(lease);
    }

    @Override
    public CompletionStage<Void> cancelWait(LockKey key, String owner) {
        counters.other.increment();
        return delegate.cancelWait(key, owner);
    }

    @Override
    public CompletionStage<Subscription> subscribe(LockKey key, WakeListener listener) {
        counters.other.increment();
        return delegate.subscribe(key, listener);
    }

    @Override
    public CompletionStage<LockInfo> describe(LockKey key) {
        counters.other.increment();
        return delegate.describe(key);
    }

    @Override
    public CompletionStage<List<LockInfo>> list(String namespace, String prefix) {
        counters.other.increment();
        return delegate.list(namespace, prefix);
    }

    @Override
    public CompletionStage<Boolean> forceRelease(LockKey key) {
        counters.other.increment();
        return delegate.forceRelease(key);
    }
}
