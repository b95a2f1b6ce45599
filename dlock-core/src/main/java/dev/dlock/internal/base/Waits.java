package dev.dlock.internal.base;

import dev.dlock.Lease;
import dev.dlock.LeaseLostException;
import dev.dlock.LockBackendException;
import dev.dlock.LockException;
import dev.dlock.LockRejectedException;
import dev.dlock.LockTimeoutException;
import java.util.concurrent.CancellationException;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.CompletionException;
import java.util.concurrent.ExecutionException;
import java.util.function.Consumer;

/**
 * Where a caller's thread meets the engine's futures: blocking for a result, and the futures of the async
 * API.
 *
 * <p>Exceptions: a {@link LockException} that completed a future on another thread is re-created on the
 * caller's thread ({@link #rethrow}), so its stack trace shows the caller; the original is its cause.
 *
 * <p>Interrupts: an interrupted wait cancels its acquisition and gives back a lease that arrived at the
 * same moment, so an interrupted caller never leaves anything held.
 */
public final class Waits {
    private Waits() {}

    /**
     * Blocks for an acquisition, honouring interrupts: an interrupted caller leaves nothing held.
     *
     * @param <T> the lease type
     * @param result the acquisition's result
     * @param cancel cancels the acquisition
     * @param interruptible whether an interrupt ends the wait (else the interrupt status stays set)
     * @return the lease
     * @throws InterruptedException if interruptible and interrupted
     */
    public static <T extends Lease> T await(CompletableFuture<T> result, Runnable cancel, boolean interruptible)
            throws InterruptedException {
        boolean interrupted = false;
        try {
            while (true) {
                try {
                    return result.get();
                } catch (InterruptedException e) {
                    if (interruptible) {
                        cancel.run();
                        if (result.isDone() && !result.isCompletedExceptionally() && !result.isCancelled()) {
                            result.join().close();
                        }
                        throw e;
                    }
                    interrupted = true;
                } catch (ExecutionException e) {
                    throw rethrow(e.getCause());
                } catch (CancellationException e) {
                    throw new LockException("the acquisition was cancelled", e);
                }
            }
        } finally {
            if (interrupted) {
                Thread.currentThread().interrupt();
            }
        }
    }

    /**
     * Blocks for an acquisition of the lease API, which declares no {@code InterruptedException}: an
     * interrupt cancels the acquisition (nothing stays held), keeps the thread's interrupt status set and
     * is thrown as a {@link LockException}.
     *
     * @param <T> the lease type
     * @param result the acquisition's result
     * @param cancel cancels the acquisition
     * @return the lease
     */
    public static <T extends Lease> T awaitOrCancelOnInterrupt(CompletableFuture<T> result, Runnable cancel) {
        try {
            return await(result, cancel, true);
        } catch (InterruptedException e) {
            Thread.currentThread().interrupt();
            throw new LockException("interrupted while waiting for the lock", e);
        }
    }

    /**
     * Joins a store call's future, throwing its failure as seen from the caller.
     *
     * @param <T> the result type
     * @param f the future
     * @return its value
     */
    public static <T> T join(CompletableFuture<T> f) {
        try {
            return f.join();
        } catch (CompletionException | CancellationException e) {
            throw rethrow(e);
        }
    }

    private static RuntimeException rethrow(Throwable t) {
        Throwable cause = t instanceof CompletionException && t.getCause() != null ? t.getCause() : t;
        if (cause instanceof LockException e) {
            // Re-create so that the stack trace shows the caller, keeping the original as the cause.
            return copy(e);
        }
        if (cause instanceof RuntimeException e) {
            return e;
        }
        if (cause instanceof Error e) {
            throw e;
        }
        return new LockException(String.valueOf(cause.getMessage()), cause);
    }

    private static LockException copy(LockException e) {
        LockException c;
        if (e instanceof LockTimeoutException) {
            c = new LockTimeoutException(e.getMessage());
        } else if (e instanceof LeaseLostException) {
            c = new LeaseLostException(e.getMessage());
        } else if (e instanceof LockRejectedException) {
            c = new LockRejectedException(e.getMessage());
        } else if (e instanceof LockBackendException) {
            return new LockBackendException(e.getMessage(), e.getCause() != null ? e.getCause() : e);
        } else {
            return new LockException(e.getMessage(), e.getCause() != null ? e.getCause() : e);
        }
        c.initCause(e);
        return c;
    }

    /**
     * A public future for an internal result: completes on the common pool; cancelling it cancels the
     * acquisition; a lease that arrives after the public future was completed otherwise is released.
     *
     * @param result the acquisition's result
     * @param cancel cancels the acquisition
     * @param giveBackNow gives back a lease that arrived but was not handed over, at once (a lease it
     *     leaves alone is closed once the result is handed on)
     * @return the future for the caller
     */
    public static CompletableFuture<Lease> publicFuture(
            CompletableFuture<? extends Lease> result, Runnable cancel, Consumer<? super Lease> giveBackNow) {
        CompletableFuture<Lease> pub = new CompletableFuture<>();
        pub.whenComplete((v, e) -> {
            if (e != null) {
                cancel.run();
                // A grant that arrived but is not yet handed over goes back now, not after the hop below
                // (which waits for a common-pool thread; until then heldLeases() would list it).
                if (result.isDone() && !result.isCompletedExceptionally()) {
                    giveBackNow.accept(result.join());
                }
            }
        });
        result.whenComplete((lease, error) -> CompletableFuture.runAsync(() -> {
            if (error != null) {
                pub.completeExceptionally(
                        error instanceof CompletionException && error.getCause() != null ? error.getCause() : error);
            } else if (!pub.complete(lease)) {
                lease.close();
            }
        }));
        return pub;
    }
}
