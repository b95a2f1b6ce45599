package dev.dlock.internal.view;

import dev.dlock.DistributedSemaphore;
import dev.dlock.internal.lease.Terms;
import dev.dlock.internal.wait.Acquisition;
import java.time.Duration;

/**
 * A view of a semaphore: every permit is an ordinary lease in {@code PERMIT} mode. It shares the lease API
 * with the locks ({@link LeaseView}) but has no thread-owned {@code Lock} view, so it is not a {@link
 * ThreadOwnedLock}.
 */
final class SemaphoreHandle extends LeaseView implements DistributedSemaphore {
    private final Terms terms;

    SemaphoreHandle(ViewParts parts, Terms terms) {
        super(parts);
        this.terms = terms;
    }

    @Override
    public String name() {
        return terms.key().name();
    }

    @Override
    public int permits() {
        return terms.permits();
    }

    @Override
    Pending begin(Duration wait, boolean lockView) {
        Acquisition a = parts.acquisitions().start(terms, wait, null);
        return new Pending(a.result(), a::cancel);
    }

    @Override
    public String toString() {
        return "DistributedSemaphore[" + terms.key().name() + ", " + terms.permits() + " permits]";
    }
}
