package dev.dlock.internal;

import dev.dlock.spi.AcquireRequest;
import dev.dlock.spi.AcquireResult;
import dev.dlock.spi.ForwardingLockBackend;
import dev.dlock.spi.LockBackend;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.CompletionStage;

/**
 * A backend whose n-th acquire of one name (the first, or a later one) is on its way until the test lets
 * it through ({@link #deliver}): the store applies it then and its answer arrives at once, on the thread that delivers it.
 * Models a request and answer delayed in the network, for the model checker: the answer may come after
 * the lease's local deadline, after the call's timeout, or while the timeout fires. A delivery before the
 * acquire is sent lets it through at once, so no order of the test's operations leaves a caller waiting.
 */
final class LateAnswer extends ForwardingLockBackend {
    private final String name;
    /** Acquires of the name still to pass before the one held; the held one at 0. */
    private int toPass;

    private CompletableFuture<AcquireResult> held;
    private Runnable send;
    private boolean delivered;

    /** Holds the {@code nth} acquire of {@code name} (1 for the first). */
    LateAnswer(LockBackend delegate, String name, int nth) {
        super(delegate);
        this.name = name;
        this.toPass = nth - 1;
    }

    @Override
    public CompletionStage<AcquireResult> acquire(AcquireRequest request) {
        synchronized (this) {
            if (!request.key().name().equals(name) || delivered || held != null) {
                return delegate.acquire(request);
            }
            if (toPass > 0) {
                toPass--;
                return delegate.acquire(request);
            }
            held = new CompletableFuture<>();
            send = () -> delegate.acquire(request).whenComplete((v, e) -> {
                if (e != null) {
                    held.completeExceptionally(e);
                } else {
                    held.complete(v);
                }
            });
            return held;
        }
    }

    /** {@return whether an acquire is held, on its way until {@link #deliver}} */
    synchronized boolean holding() {
        return send != null;
    }

    /** Lets the held acquire reach the store, or the next one through at once if none is held yet. */
    void deliver() {
        Runnable now;
        synchronized (this) {
            delivered = true;
            now = send;
            send = null;
        }
        if (now != null) {
            now.run();
        }
    }
}
