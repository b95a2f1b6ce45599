package dev.dlock.internal;

import dev.dlock.spi.AcquireRequest;
import dev.dlock.spi.AcquireResult;
import dev.dlock.spi.ForwardingLockBackend;
import dev.dlock.spi.LockBackend;
import dev.dlock.spi.LockKey;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.CompletionStage;

/**
 * A backend on whose network a release overtakes an acquire: the first acquire of one name sent while the
 * store holds that name (by the grants and releases seen here) stays on its way until the next release of
 * the name has reached the store; then the store applies it. Its answer comes when the store answers it:
 * over the memory store, at once, on the releasing thread, before the release's own answer.
 *
 * <p>Design note: for the model checker, which needs every caller to finish in every order it tries. An
 * acquire is held only while a hold exists, and every hold ends in a release (nothing here expires), so
 * the held acquire is always let through, with no operation of the test's to deliver it ({@link
 * LateAnswer} needs one, whose place in the scenario the checker must then find too). With a hand-off
 * between the callers of one client, the release that lets it through can be the one of the very caller
 * whose acquire it is: its wait was over before its own attempt reached the store.
 */
final class OvertakingRelease extends ForwardingLockBackend {
    private final String name;
    /** Whether a grant of the name was answered and no release of it sent since. */
    private boolean heldAtStore;
    /** Whether an acquire was held already (only the first is). */
    private boolean usedUp;

    private Runnable send;
    /** How many acquires were held and then let through by a release (0 or 1). */
    private int overtaken;

    /** Holds the first acquire of {@code name} sent while the store holds the name. */
    OvertakingRelease(LockBackend delegate, String name) {
        super(delegate);
        this.name = name;
    }

    @Override
    public CompletionStage<AcquireResult> acquire(AcquireRequest request) {
        if (!request.key().name().equals(name)) {
            return delegate.acquire(request);
        }
        synchronized (this) {
            if (heldAtStore && !usedUp) {
                usedUp = true;
                CompletableFuture<AcquireResult> held = new CompletableFuture<>();
                send = () -> forward(request).whenComplete((answer, error) -> {
                    if (error != null) {
                        held.completeExceptionally(error);
                    } else {
                        held.complete(answer);
                    }
                });
                return held;
            }
        }
        return forward(request);
    }

    private CompletionStage<AcquireResult> forward(AcquireRequest request) {
        return delegate.acquire(request).thenApply(answer -> {
            if (answer.isGranted()) {
                synchronized (this) {
                    heldAtStore = true;
                }
            }
            return answer;
        });
    }

    @Override
    public CompletionStage<Boolean> release(LockKey key, String owner) {
        if (!key.name().equals(name)) {
            return delegate.release(key, owner);
        }
        Runnable now;
        synchronized (this) {
            heldAtStore = false;
            now = send;
            send = null;
            if (now != null) {
                overtaken++;
            }
        }
        CompletionStage<Boolean> released = delegate.release(key, owner);
        if (now != null) {
            released.whenComplete((wasHeld, error) -> now.run());
        }
        return released;
    }

    /** {@return whether an acquire is held, on its way until the next release} */
    synchronized boolean holding() {
        return send != null;
    }

    /** {@return how many acquires were held and then let through by a release} */
    synchronized int overtaken() {
        return overtaken;
    }
}
