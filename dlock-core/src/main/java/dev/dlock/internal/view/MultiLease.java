package dev.dlock.internal.view;

import dev.dlock.Lease;
import dev.dlock.LeaseLostException;
import dev.dlock.LockException;
import dev.dlock.internal.base.Checks;
import dev.dlock.internal.lease.HeldLease;
import dev.dlock.internal.lease.LeaseImpl;
import java.time.Duration;
import java.util.List;
import java.util.concurrent.CompletableFuture;

/**
 * The lease of a multi-lock: a view over the leases of its parts, made by {@link MultiLockHandle} once
 * every part is granted.
 *
 * <p>Invariants: valid while every part is; lost as soon as one part is lost ({@link #whenLost()}
 * completes with that part's signal); {@link #remaining()} and {@link #heldFor()} are the smallest of the
 * parts'; {@link #extend} extends each part; closing releases every part, attempting all even if one
 * fails and then throwing the first failure, and cancels {@code whenLost()} if nothing was lost.
 *
 * <p>Why a view and not a lease of its own: a multi-lock has no identity in the store, only its parts
 * do. Each part is renewed by the engine's watchdog, loses and releases exactly as a single lease, so
 * this class adds no timer and no store call. For the same reason it has no fencing token: the parts'
 * tokens come from different counters and no one number could order multi-leases; {@link #fencingToken()}
 * says to use {@link #parts()}.
 */
final class MultiLease implements HeldLease {
    private final List<LeaseImpl> parts;
    private final String name;
    private final CompletableFuture<LeaseLostException> lost = new CompletableFuture<>();

    MultiLease(List<LeaseImpl> parts) {
        this.parts = List.copyOf(parts);
        this.name = String.join(",", parts.stream().map(Lease::name).toList());
        for (LeaseImpl part : parts) {
            part.whenLost().whenComplete((signal, error) -> {
                if (signal != null) {
                    lost.complete(signal);
                }
            });
        }
    }

    @Override
    public String name() {
        return name;
    }

    @Override
    public long fencingToken() {
        throw new IllegalStateException("the multi-lock on [" + name + "] has one fencing token per name; use parts()");
    }

    @Override
    public List<Lease> parts() {
        return List.copyOf(parts);
    }

    @Override
    public boolean isValid() {
        return parts.stream().allMatch(Lease::isValid);
    }

    @Override
    public void checkValid() {
        parts.forEach(Lease::checkValid);
    }

    @Override
    public Duration remaining() {
        return parts.stream().map(Lease::remaining).min(Duration::compareTo).orElse(Duration.ZERO);
    }

    @Override
    public Duration heldFor() {
        return parts.stream().map(Lease::heldFor).min(Duration::compareTo).orElse(Duration.ZERO);
    }

    @Override
    public void extend(Duration leaseTime) {
        parts.forEach(p -> p.extend(leaseTime));
    }

    @Override
    public CompletableFuture<LeaseLostException> whenLost() {
        return lost;
    }

    @Override
    public String lostReason() {
        for (LeaseImpl part : parts) {
            String reason = part.lostReason();
            if (reason != null) {
                return "'" + part.name() + "': " + reason;
            }
        }
        return null;
    }

    @Override
    public void ownedBy(Thread thread) {
        parts.forEach(p -> p.ownedBy(thread));
    }

    /**
     * Each part is closed with the delay; a loss of one before then is still reported here, and once
     * every part ended cleanly {@code whenLost()} is cancelled, as by {@link #close()}.
     */
    @Override
    public void closeAfter(Duration delay) {
        if (Checks.releaseDelay(delay).isZero()) {
            close();
            return;
        }
        for (LeaseImpl part : parts) {
            part.closeAfter(delay);
        }
        CompletableFuture.allOf(parts.stream().map(LeaseImpl::whenLost).toArray(CompletableFuture[]::new))
                .whenComplete((ended, error) -> {
                    if (!lost.isDone()) {
                        lost.cancel(false); // every part ended and none was lost
                    }
                });
    }

    @Override
    public void close() {
        LockException first = null;
        for (LeaseImpl part : parts) {
            try {
                part.close();
            } catch (LockException e) {
                if (first == null) {
                    first = e;
                }
            }
        }
        if (!lost.isDone()) {
            lost.cancel(false);
        }
        if (first != null) {
            throw first;
        }
    }

    @Override
    public String toString() {
        return "MultiLease[" + parts + "]";
    }
}
