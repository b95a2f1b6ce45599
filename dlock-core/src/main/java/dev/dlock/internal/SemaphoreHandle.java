package dev.dlock.internal;

import dev.dlock.DistributedSemaphore;
import dev.dlock.Lease;
import dev.dlock.LockTimeoutException;
import dev.dlock.spi.LockKey;
import java.time.Duration;
import java.util.Optional;
import java.util.concurrent.CompletableFuture;

/** A view of a semaphore: every permit is an ordinary lease in {@code PERMIT} mode. */
final class SemaphoreHandle implements DistributedSemaphore {
    private final Engine engine;
    private final LockKey key;
    private final int permits;

    SemaphoreHandle(Engine engine, LockKey key, int permits) {
        this.engine = engine;
        this.key = key;
        this.permits = permits;
    }

    @Override
    public String name() {
        return key.name();
    }

    @Override
    public int permits() {
        return permits;
    }

    private Acquisition start(Duration wait) {
        return engine.start(key, wait, engine.options.leaseTime().toMillis(), engine.options.renewal(), permits, null);
    }

    @Override
    public Lease acquire(Duration wait) {
        Acquisition a = start(wait);
        return Engine.awaitUninterruptibly(a.result, a::cancel);
    }

    @Override
    public Optional<Lease> tryAcquire() {
        try {
            return Optional.of(acquire(Duration.ZERO));
        } catch (LockTimeoutException busy) {
            return Optional.empty();
        }
    }

    @Override
    public CompletableFuture<Lease> acquireAsync(Duration wait) {
        Acquisition a = start(wait);
        return Engine.publicFuture(a.result, a::cancel);
    }

    @Override
    public String toString() {
        return "DistributedSemaphore[" + key.name() + ", " + permits + " permits]";
    }
}
