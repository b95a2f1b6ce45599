package dev.dlock.internal.view;

import dev.dlock.DistributedLock;
import dev.dlock.LockTimeoutException;
import dev.dlock.internal.base.Checks;
import dev.dlock.internal.lease.LeaseImpl;
import dev.dlock.internal.lease.Terms;
import dev.dlock.internal.wait.Acquisition;
import dev.dlock.spi.LockKey;
import java.time.Duration;
import java.util.ArrayList;
import java.util.List;
import java.util.concurrent.CompletableFuture;

/**
 * A lock over several exclusive locks, taken in name order within one deadline, all or nothing.
 *
 * <p>Each acquisition is a {@code Run}: a chain of ordinary single-name acquisitions ({@code Acquisitions}),
 * one part at a time in the order of {@code keys} (sorted by name by {@link Views}), all sharing the run's
 * deadline. The parts are plain leases; the run hands out a {@link MultiLease} over them once the last
 * part is granted.
 *
 * <p>Invariants:
 *
 * <ul>
 *   <li>Sorting makes two multi-locks over overlapping names take their common names in the same order,
 *       so they cannot deadlock.
 *   <li>All or nothing: if any part cannot be had before the deadline, the parts already taken are
 *       released before the failure is reported (the store answered each release, or it failed and is
 *       retried in the background), so another client that tries a part after the failure finds it free. Cancelling cancels the part being waited for and
 *       releases the rest; a result that loses a race with cancellation releases what it got.
 *   <li>At most one part is in flight per run, and the wait left for it is what remains of the deadline.
 *   <li>A part that expires or is lost while a later part is awaited makes the run release everything and
 *       start over within the same deadline, so a multi-lease is never handed out with a dead part.
 * </ul>
 *
 * <p>Why parts one by one through the engine instead of a multi-key operation in the store: every
 * backend then supports multi-locks without an SPI method of its own, and each part waits, wakes,
 * renews and fences exactly like a single lock. Taking parts in parallel would be faster, but two
 * overlapping multi-locks could then each hold some of the other's names and have to back off and
 * retry. The cost is one store round trip per part, and the multi-lock is not atomic in the store: others
 * can see some parts held before the rest are.
 */
final class MultiLockHandle extends ThreadOwnedLock {
    private final List<LockKey> keys;
    private final long leaseMillis;
    private final boolean renew;
    private final String name;

    MultiLockHandle(ViewParts parts, List<LockKey> keys, long leaseMillis, boolean renew) {
        super(parts);
        this.keys = List.copyOf(keys);
        this.leaseMillis = leaseMillis;
        this.renew = renew;
        this.name = String.join(",", keys.stream().map(LockKey::name).toList());
    }

    @Override
    public String name() {
        return name;
    }

    /** One multi-acquisition: the parts taken so far and the part in flight. */
    private final class Run {
        final CompletableFuture<MultiLease> result = new CompletableFuture<>();
        final List<LeaseImpl> taken = new ArrayList<>();
        final long deadlineNanos;
        volatile Acquisition current;

        Run(Duration wait) {
            deadlineNanos = Checks.deadline(
                    parts.acquisitions().nanoTime(), Checks.saturatedNanos(Checks.nonNegative(wait, "wait")));
            result.whenComplete((lease, error) -> {
                if (result.isCancelled()) {
                    Acquisition a = current;
                    if (a != null) {
                        a.cancel();
                    }
                }
            });
        }

        void next() {
            if (result.isDone()) {
                releaseTaken();
                return;
            }
            if (taken.stream().anyMatch(part -> !part.isValid())) {
                // A part taken earlier expired (or was lost) while a later one was awaited: never hand
                // out a multi-lease with a dead part. Start over, in name order, within the deadline.
                if (deadlineNanos != Long.MAX_VALUE && parts.acquisitions().nanoTime() - deadlineNanos >= 0) {
                    failAfterReleasing(new LockTimeoutException("could not acquire multi-lock [" + name
                            + "] within the wait: a part expired before the last part was granted"
                            + " (lease time " + Duration.ofMillis(leaseMillis)
                            + " is shorter than the wait for the others)"));
                    return;
                }
                releaseTaken();
                taken.clear();
            }
            if (taken.size() == keys.size()) {
                MultiLease lease = new MultiLease(taken);
                if (!result.complete(lease)) {
                    releaseTaken();
                }
                return;
            }
            long left = deadlineNanos == Long.MAX_VALUE
                    ? Long.MAX_VALUE
                    : Math.max(0, deadlineNanos - parts.acquisitions().nanoTime());
            Acquisition a;
            try {
                a = parts.acquisitions()
                        .start(new Terms(keys.get(taken.size()), leaseMillis, renew, 1), Duration.ofNanos(left), null);
            } catch (RuntimeException e) {
                failAfterReleasing(e);
                return;
            }
            current = a;
            if (result.isDone()) {
                a.cancel(); // cancelled while this part was being started, after the cancel looked at current
            }
            a.result().whenComplete((part, error) -> {
                if (error != null) {
                    failAfterReleasing(error);
                } else {
                    taken.add(part);
                    next();
                }
            });
        }

        /** Releases the parts taken; completes once each release was answered or failed (then retried). */
        CompletableFuture<Void> releaseTaken() {
            List<CompletableFuture<Boolean>> releases = new ArrayList<>();
            for (LeaseImpl part : taken) {
                CompletableFuture<Boolean> release = part.releaseAsync();
                if (release != null) {
                    releases.add(release);
                }
            }
            return CompletableFuture.allOf(releases.toArray(CompletableFuture[]::new))
                    .exceptionally(ignored -> null);
        }

        /** Reports the run's failure once the parts taken are released (all or nothing). */
        void failAfterReleasing(Throwable error) {
            releaseTaken().whenComplete((ignored, alsoIgnored) -> result.completeExceptionally(error));
            taken.clear();
        }
    }

    @Override
    Pending begin(Duration wait, boolean lockView) {
        Run run = new Run(wait);
        run.next();
        return new Pending(run.result, () -> run.result.cancel(false));
    }

    @Override
    Object holdResource() {
        return keys;
    }

    @Override
    String describe() {
        return "multi-lock [" + name + "]";
    }

    @Override
    public DistributedLock withLeaseTime(Duration leaseTime) {
        return new MultiLockHandle(parts, keys, Checks.leaseMillis(leaseTime), renew);
    }

    @Override
    public DistributedLock withRenewal(boolean renew) {
        return new MultiLockHandle(parts, keys, leaseMillis, renew);
    }
}
