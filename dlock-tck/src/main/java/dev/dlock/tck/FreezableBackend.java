package dev.dlock.tck;

import dev.dlock.LockInfo;
import dev.dlock.spi.AcquireRequest;
import dev.dlock.spi.AcquireResult;
import dev.dlock.spi.ForwardingLockBackend;
import dev.dlock.spi.LockBackend;
import dev.dlock.spi.LockKey;
import dev.dlock.spi.RenewRequest;
import dev.dlock.spi.WakeListener;
import java.time.Duration;
import java.util.List;
import java.util.Set;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.CompletionStage;
import java.util.concurrent.Executors;
import java.util.concurrent.ScheduledExecutorService;
import java.util.concurrent.TimeUnit;
import java.util.function.Supplier;

/**
 * Wraps a backend so that one client can be made to "crash": after {@link #freeze()} no request from
 * this client reaches the store any more (each gets a stage that never completes), exactly what the store
 * sees of a process that died (answers to requests sent before the freeze are not delivered either). Other clients of the same store are unaffected. Install it through the SPI, around
 * the factory a builder opens: {@code builder.backend(builder.backend().andThen(FreezableBackend::new))}.
 *
 * <p>It can also make the way back slow: after {@link #delayAnswers(Duration)} every request still reaches
 * the store at once, but its answer reaches the client only after the delay, as over a congested link.
 */
public final class FreezableBackend extends ForwardingLockBackend {
    private static final ScheduledExecutorService DELAYS = Executors.newSingleThreadScheduledExecutor(r -> {
        Thread t = new Thread(r, "tck-answer-delay");
        t.setDaemon(true);
        return t;
    });

    private volatile boolean frozen;
    private volatile long answerDelayNanos;
    private volatile boolean failNextRelease;

    /**
     * Wraps a backend.
     *
     * @param delegate the real backend
     */
    public FreezableBackend(LockBackend delegate) {
        super(delegate);
    }

    /** From now on, nothing reaches the store. */
    public void freeze() {
        frozen = true;
    }

    /**
     * From now on, answers reach the client {@code delay} after the store gave them (zero: at once).
     *
     * @param delay the extra time on the way back
     */
    public void delayAnswers(Duration delay) {
        answerDelayNanos = delay.toNanos();
    }

    private <T> CompletionStage<T> pass(Supplier<CompletionStage<T>> call) {
        if (frozen) {
            return new CompletableFuture<>();
        }
        long delay = answerDelayNanos;
        CompletableFuture<T> delivered = new CompletableFuture<>();
        call.get().whenComplete((value, error) -> {
            Runnable deliver = () -> {
                if (frozen) {
                    return; // a crashed process never sees the answers to what it sent before the crash
                }
                if (error != null) {
                    delivered.completeExceptionally(error);
                } else {
                    delivered.complete(value);
                }
            };
            if (delay == 0) {
                deliver.run();
            } else {
                DELAYS.schedule(deliver, delay, TimeUnit.NANOSECONDS);
            }
        });
        return delivered;
    }

    @Override
    public CompletionStage<AcquireResult> acquire(AcquireRequest request) {
        return pass(() -> delegate.acquire(request));
    }

    /** The next release fails before it reaches the store, as when the connection drops at that moment. */
    public void failNextRelease() {
        failNextRelease = true;
    }

    @Override
    public CompletionStage<Boolean> release(LockKey key, String owner) {
        if (failNextRelease) {
            failNextRelease = false;
            return CompletableFuture.failedFuture(new IllegalStateException("connection lost (injected)"));
        }
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
}
