package dev.dlock.internal.lease;

import dev.dlock.LeaseLostException;
import java.lang.invoke.MethodHandles;
import java.lang.invoke.VarHandle;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.ForkJoinPool;

/**
 * A lease's lost signal, {@code whenLost()}: cancelled when the lease ends without being lost (released,
 * passed on), completed with the {@link LeaseLostException} when it is lost, on the common pool, never on
 * a store or scheduler thread.
 *
 * <p>Design note: the future is made when somebody first asks for it. Most leases end without anybody
 * asking, and the future and its clean ending were two objects of every lock+unlock cycle (issue 25). How
 * the signal ends is kept once known ({@link #ending}), so a future asked for later is made already
 * settled. A superclass of {@link LeaseTiming} (so of {@link LeaseImpl}) rather than a field, so that a
 * lease stays one object.
 *
 * <p>Concurrency: the ending is written before the future is read ({@link #endLostSignal}), and the future
 * before the ending is read ({@link #whenLost}): of a thread that asks and one that ends the lease, at least
 * one sees the other's write, and completing twice is harmless.
 */
abstract class LostSignal {
    /** {@link #ending} of a lease that ended without being lost: {@link #whenLost()} is cancelled. */
    static final Object CLEAN = new Object();

    private static final VarHandle LOST;

    static {
        try {
            LOST = MethodHandles.lookup().findVarHandle(LostSignal.class, "lost", CompletableFuture.class);
        } catch (ReflectiveOperationException e) {
            throw new ExceptionInInitializerError(e);
        }
    }

    /** The signal, made when first asked for ({@link #whenLost()}); set once ({@link #LOST}). */
    private volatile CompletableFuture<LeaseLostException> lost;
    /** How the signal ends once the lease ended: {@link #CLEAN}, or the {@link LeaseLostException}. */
    private volatile Object ending;

    /**
     * Keeps how the signal ends and ends the future if somebody asked for it.
     *
     * @param how {@link #CLEAN} or the {@link LeaseLostException}
     */
    final void endLostSignal(Object how) {
        ending = how;
        CompletableFuture<LeaseLostException> signal = lost;
        if (signal != null) {
            complete(signal, how);
        }
    }

    /**
     * The lost signal: completes with the loss, or is cancelled when the lease ends without one.
     *
     * @return the one future of this lease
     */
    public CompletableFuture<LeaseLostException> whenLost() {
        CompletableFuture<LeaseLostException> signal = lost;
        if (signal != null) {
            return signal;
        }
        Object how = ending;
        signal = how == null
                ? new CompletableFuture<>()
                : how == CLEAN
                        ? CompletableFuture.failedFuture(CleanEnd.signal())
                        : CompletableFuture.completedFuture((LeaseLostException) how);
        if (!LOST.compareAndSet(this, null, signal)) {
            return lost;
        }
        if (how == null && (how = ending) != null) {
            complete(signal, how); // the lease ended between the two reads of the ending
        }
        return signal;
    }

    /** Cancels a clean end on this thread; completes a loss on the common pool. */
    private static void complete(CompletableFuture<LeaseLostException> signal, Object how) {
        if (how == CLEAN) {
            signal.completeExceptionally(CleanEnd.signal());
        } else {
            CompletableFuture.runAsync(() -> signal.complete((LeaseLostException) how), ForkJoinPool.commonPool());
        }
    }
}
