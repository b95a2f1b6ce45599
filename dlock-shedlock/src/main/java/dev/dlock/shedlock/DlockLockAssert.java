package dev.dlock.shedlock;

import dev.dlock.Lease;
import java.util.ArrayList;
import java.util.List;
import java.util.Optional;

/**
 * What a running job can learn about the lock ShedLock holds for it on this thread: the dlock lease, and
 * from it the fencing token to pass to the resources the job writes.
 *
 * <pre>{@code
 * @Scheduled(cron = "0 0 * * * *")
 * @SchedulerLock(name = "invoices", lockAtMostFor = "PT10M")
 * void issueInvoices() {
 *     ledger.write(batch, DlockLockAssert.currentToken());
 * }
 * }</pre>
 *
 * <p>Design: {@link DlockLockProvider#lock} records each lock it grants on the calling thread, which is
 * the thread that runs the job under ShedLock's executor; {@code unlock()} and {@code extend()} update the
 * record. Nested jobs see their innermost lock. A lock unlocked on another thread, or whose lease was
 * closed without an unlock (its client was closed), is dropped from this thread's record the next time it
 * is read; a lost one when the thread is granted its next lock.
 */
public final class DlockLockAssert {
    private static final ThreadLocal<List<HeldLock>> HELD = new ThreadLocal<>();

    private DlockLockAssert() {}

    /**
     * The lease of the innermost lock a {@link DlockLockProvider} granted on this thread and that is not
     * unlocked yet. It may be lost (for example after {@code lockAtMostFor}): check {@link Lease#isValid()}
     * or {@link Lease#checkValid()} before a write that must be protected. Do not close it; ShedLock does.
     *
     * @return the lease, or empty outside a job run by a {@link DlockLockProvider}
     */
    public static Optional<Lease> currentLease() {
        List<HeldLock> held = held();
        return held.isEmpty()
                ? Optional.empty()
                : Optional.of(held.get(held.size() - 1).lease());
    }

    /**
     * The fencing token of {@link #currentLease()}: strictly greater than that of every earlier grant of
     * the same lock name, to any process.
     *
     * @return the token
     * @throws IllegalStateException outside a job run by a {@link DlockLockProvider}
     */
    public static long currentToken() {
        return currentLease()
                .orElseThrow(() -> new IllegalStateException(
                        "this thread holds no lock of a DlockLockProvider: call currentToken() from a job that"
                                + " ShedLock runs under its lock"))
                .fencingToken();
    }

    /**
     * Records a lock granted on this thread, dropping recorded locks whose lease is no longer valid: they
     * were abandoned (never unlocked), or belong to an outer job whose lock is lost, which then reads no
     * token rather than a stale one.
     */
    static void held(HeldLock lock) {
        List<HeldLock> held = held();
        held.removeIf(earlier -> !earlier.lease().isValid());
        held.add(lock);
        HELD.set(held);
    }

    /** Puts the extension in the place of the lock it replaced, when that was recorded on this thread. */
    static void replaced(HeldLock old, HeldLock next) {
        List<HeldLock> held = HELD.get(); // not held(): that drops the old lock, spent by now
        int at = held == null ? -1 : held.indexOf(old);
        if (at >= 0) {
            held.set(at, next);
        } else {
            held(next);
        }
    }

    /** This thread's active locks, innermost last; drops the ones that were unlocked or extended. */
    private static List<HeldLock> held() {
        List<HeldLock> held = HELD.get();
        if (held == null) {
            return new ArrayList<>(2);
        }
        // Spent locks, and locks whose lease was closed (by its client's close, say) though never unlocked.
        held.removeIf(lock -> !lock.isActive() || lock.lease().whenLost().isCancelled());
        if (held.isEmpty()) {
            HELD.remove();
        }
        return held;
    }
}
