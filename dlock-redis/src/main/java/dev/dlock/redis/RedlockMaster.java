package dev.dlock.redis;

import dev.dlock.spi.BackendContext;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.CompletionStage;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.atomic.AtomicBoolean;
import java.util.function.Function;

/**
 * One Redlock master: a single-server {@link RedisBackend} (the same script, so the master enforces
 * exclusion on its own), opened at connect or, when it could not be reached then, later in the
 * background.
 *
 * <p>A master that could not be opened fails every request at once with the reason, and starts a new
 * connection attempt on a thread of its own at most once a second; once open, Lettuce reconnects it by
 * itself. So a Redlock client starts with a minority of its masters down and picks them up when they
 * come.
 *
 * <p>Concurrency: the backend reference is volatile; one connection attempt at a time. Failure modes: an
 * attempt that finishes after {@link #close()} closes what it opened.
 */
final class RedlockMaster {
    private static final long REOPEN_NANOS = TimeUnit.SECONDS.toNanos(1);

    final String name;
    private final RedisBackendFactory factory;
    private final BackendContext context;
    private final AtomicBoolean opening = new AtomicBoolean();
    private volatile RedisBackend backend;
    private volatile RuntimeException openFailure;
    private volatile long nextOpenNanos;
    private volatile boolean closed;

    RedlockMaster(String name, RedisBackendFactory factory, BackendContext context) {
        this.name = name;
        this.factory = factory;
        this.context = context;
    }

    /** Connects now, blocking up to the operation timeout; a failure is kept and returned. */
    RuntimeException open() {
        try {
            RedisBackend opened = (RedisBackend) factory.open(context);
            synchronized (this) {
                if (!closed) {
                    backend = opened;
                    return null;
                }
            }
            opened.close();
            return null;
        } catch (RuntimeException e) {
            openFailure = e;
            nextOpenNanos = System.nanoTime() + REOPEN_NANOS;
            return e;
        }
    }

    /** Runs one request on this master; fails at once while it is not connected. */
    <T> CompletionStage<T> call(Function<RedisBackend, CompletionStage<T>> request) {
        RedisBackend open = backend;
        if (open != null) {
            return request.apply(open);
        }
        reopenInBackground();
        RuntimeException failure = openFailure;
        return CompletableFuture.failedFuture(
                new IllegalStateException("not connected: " + (failure == null ? "connecting" : failure.getMessage())));
    }

    private void reopenInBackground() {
        if (closed || System.nanoTime() - nextOpenNanos < 0 || !opening.compareAndSet(false, true)) {
            return;
        }
        Thread connecting = new Thread(
                () -> {
                    try {
                        open();
                    } finally {
                        opening.set(false);
                    }
                },
                "dlock-redlock-connect-" + name);
        connecting.setDaemon(true);
        connecting.start();
    }

    void close() {
        RedisBackend open;
        synchronized (this) {
            closed = true;
            open = backend;
            backend = null;
        }
        if (open != null) {
            open.close();
        }
    }

    @Override
    public String toString() {
        return name;
    }
}
