package dev.dlock.internal.lease;

import java.util.concurrent.CancellationException;

/**
 * How a lease's {@code whenLost()} future ends when the lease ends without being lost (released, passed
 * on, resigned): cancelled, as the public contract says.
 *
 * <p>Design: {@code CompletableFuture.cancel} would build a {@link CancellationException} with a filled
 * stack trace on every release, a third of the bytes of an uncontended lock+unlock cycle on the memory
 * store and a stack walk on the caller's thread (issue 25's profile), whether or not anybody asked for the
 * signal. Completing the future with this stackless {@link CancellationException} is the same to its
 * readers ({@code isCancelled()} is true, {@code join()} throws it) and costs one small object.
 */
final class CleanEnd extends CancellationException {
    private static final long serialVersionUID = 1L;

    private CleanEnd() {
        super("the lease ended without being lost (released, passed on or resigned)");
    }

    /** A new signal; without a stack trace, which would only show the releasing call. */
    static CleanEnd signal() {
        return new CleanEnd();
    }

    @Override
    public synchronized Throwable fillInStackTrace() {
        return this;
    }
}
