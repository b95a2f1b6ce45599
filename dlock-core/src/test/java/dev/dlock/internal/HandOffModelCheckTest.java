package dev.dlock.internal;

import dev.dlock.DistributedLock;
import dev.dlock.DistributedReadWriteLock;
import dev.dlock.Lease;
import dev.dlock.LeaseLostException;
import dev.dlock.internal.base.ListenerEvents;
import dev.dlock.internal.lease.LeaseImpl;
import dev.dlock.mem.FreshMemoryStore;
import dev.dlock.spi.Mode;
import java.time.Duration;
import java.util.List;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.atomic.AtomicInteger;
import java.util.concurrent.atomic.AtomicLong;
import java.util.concurrent.atomic.AtomicReference;
import org.jetbrains.lincheck.datastructures.ModelCheckingOptions;
import org.jetbrains.lincheck.datastructures.Operation;
import org.jetbrains.lincheck.datastructures.Options;
import org.jetbrains.lincheck.datastructures.StressOptions;
import org.jetbrains.lincheck.datastructures.Validate;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.Timeout;

/**
 * Lincheck over the engine with a memory store, on a time the test moves ({@link ManualTime}): the
 * callers of one client take, re-enter and downgrade locks, hand holds on to each other (cohort), and a
 * caller may stall the client's scheduler past every lease's deadline or run its due timers (renewal
 * ticks, wait deadlines), in the interleavings the model checker explores, and on real threads in stress
 * mode. No thread of the engine runs: its timers run in the test's operations, on the checker's threads.
 *
 * <p>The sequential specification ({@link HandOffSpec}): every operation returns normally. An
 * operation is a whole critical section that checks the lock's promises and throws if one is broken,
 * which no sequential order explains, so Lincheck prints the interleaving. The promises: at most one
 * holder of an exclusive or write hold, and no reader beside a writer (a downgraded writer's own read
 * excepted); fencing tokens strictly increase in grant order per name; a hold is valid when it is handed
 * over (unless a stall came meanwhile); a re-entry into a hold whose lease was gone before it throws
 * {@link LeaseLostException}, and one into a live hold keeps it until the outer unlock; after every
 * caller is done nothing is held at the store or the client and nobody waits; and no caller waits
 * forever (the checker reports a run in which every unfinished caller waits).
 *
 * <p>Store answers that come late, and a store call's timeout: {@link LateAnswerModelCheckTest}.
 *
 * <p>Budget: {@code -Ddlock.lincheck.invocations=N} interleavings per scenario (default 12), {@code
 * -Ddlock.lincheck.iterations=N} generated scenarios besides the fixed ones (default 1); the stress case
 * runs 5x the scenarios and 20x the invocations. Times in docs/models.md.
 */
@Timeout(600)
public class HandOffModelCheckTest {
    private static final Duration WAIT = Duration.ofSeconds(60);
    private static final long LEASE_MILLIS = 30_000;
    /** A client with hand-off (8 passes, 30 s chains) and 5 s store calls; leases renewed. */
    static final EngineOptions OPTIONS = new EngineOptions(
            LEASE_MILLIS,
            true,
            WAIT,
            Integer.MAX_VALUE,
            "dlock",
            Duration.ofSeconds(5),
            ListenerEvents.NONE,
            8,
            Duration.ofSeconds(30));

    private final ManualTime time = new ManualTime();
    private final Engine engine = Engine.open(FreshMemoryStore.factory(), OPTIONS, time);
    private final DistributedLock lock = engine.lock("x");
    private final DistributedReadWriteLock rw = engine.readWriteLock("rw");
    /** The caller in the critical section of 'x', or null. */
    private final AtomicReference<Lease> holder = new AtomicReference<>();

    private final AtomicInteger writers = new AtomicInteger();
    private final AtomicInteger readers = new AtomicInteger();
    private final AtomicLong lastToken = new AtomicLong();
    private final AtomicLong lastWriteToken = new AtomicLong();
    /**
     * Stalls begun (counted before the clock moves) and done (after): a hold handed over after a caller's
     * start may be invalid only if a stall begun by then was not done when the caller started.
     */
    private final AtomicInteger stallsBegun = new AtomicInteger();

    private final AtomicInteger stalls = new AtomicInteger();

    static void check(boolean promise, String what) {
        if (!promise) {
            throw new IllegalStateException(what);
        }
    }

    private void tokenAfter(AtomicLong last, Lease lease, int stallsBefore) {
        long before = last.getAndAccumulate(lease.fencingToken(), Math::max);
        check(lease.fencingToken() > before, "token " + lease.fencingToken() + " granted after " + before);
        check(lease.isValid() || stallsBegun.get() > stallsBefore, "a hold handed over invalid: " + lease);
    }

    /** Enters and leaves the critical section of 'x': a caller found inside must hold a lease gone invalid. */
    private void exclusive(Lease lease, int stallsBefore) {
        Lease other = holder.getAndSet(lease);
        check(other == null || !other.isValid(), "two valid holders of 'x' at once: " + other + ", " + lease);
        tokenAfter(lastToken, lease, stallsBefore);
        holder.compareAndSet(lease, null);
    }

    /** Waits for the lock (lease API), checks, releases: a waiter the release may hand the hold to. */
    @Operation
    public void acquireRelease() {
        int stallsBefore = stalls.get();
        Lease lease = lock.acquire(WAIT);
        exclusive(lease, stallsBefore);
        closeQuietly(lease);
    }

    /** Tries once (no wait), checks, releases. */
    @Operation
    public void tryAcquireRelease() {
        int stallsBefore = stalls.get();
        lock.tryAcquire().ifPresent(lease -> {
            exclusive(lease, stallsBefore);
            closeQuietly(lease);
        });
    }

    /** A release after a stall may find the lease lost: said by a {@link LeaseLostException}, no promise broken. */
    private static void closeQuietly(Lease lease) {
        try {
            lease.close();
        } catch (LeaseLostException lostInAStall) {
            check(!lease.isValid(), "a valid lease's release said it was lost");
        }
    }

    private void unlockQuietly(DistributedLock l) {
        try {
            l.unlock();
        } catch (LeaseLostException lostInAStall) {
            check(stallsBegun.get() > 0, "an unlock said the lease was lost, and no stall came");
        }
    }

    /**
     * Locks the {@code Lock} view twice (re-entry), unlocks twice: held until the outer unlock; a re-entry
     * into a hold whose lease was gone before it (past its deadline after a stall) throws instead.
     */
    @Operation
    public void reenter() {
        int stallsBefore = stalls.get();
        lock.lock();
        Lease lease = lock.currentLease().orElseThrow();
        exclusive(lease, stallsBefore);
        boolean goneBefore = !lease.isValid();
        try {
            lock.lock();
        } catch (LeaseLostException e) {
            check(!lease.isValid(), "a re-entry into a valid hold threw " + e);
            unlockQuietly(lock);
            check(!lock.isHeldByCurrentThread(), "held after the unlock of a lost hold");
            return;
        }
        check(!goneBefore, "a re-entry into a hold whose lease was gone returned normally: " + lease);
        unlockQuietly(lock);
        check(lock.isHeldByCurrentThread(), "a re-entered lock not held after the inner unlock");
        check(lock.currentLease().orElseThrow() == lease, "the inner unlock changed the lease");
        unlockQuietly(lock);
        check(!lock.isHeldByCurrentThread(), "held after the outer unlock");
    }

    private int enterWrite() {
        int stallsBefore = stalls.get();
        rw.writeLock().lock();
        check(writers.incrementAndGet() == 1 || stallsBegun.get() > 0, "two writers at once");
        check(readers.get() == 0 || stallsBegun.get() > 0, "a writer beside a reader");
        return stallsBefore;
    }

    /** Writes, then leaves. */
    @Operation
    public void write() {
        int stallsBefore = enterWrite();
        tokenAfter(lastWriteToken, rw.writeLock().currentLease().orElseThrow(), stallsBefore);
        writers.decrementAndGet();
        unlockQuietly(rw.writeLock());
    }

    /** Writes, takes the read lock under the write lock (a downgrade), leaves the write lock, reads, leaves. */
    @Operation
    public void writeThenDowngrade() {
        int stallsBefore = enterWrite();
        tokenAfter(lastWriteToken, rw.writeLock().currentLease().orElseThrow(), stallsBefore);
        rw.readLock().lock();
        readers.incrementAndGet();
        writers.decrementAndGet();
        unlockQuietly(rw.writeLock());
        check(writers.get() == 0 || stallsBegun.get() > 0, "a writer beside a downgraded reader");
        // Seen here, on this thread, at once: a write hold passed on under this read is already the client's.
        for (Lease held : engine.heldLeases()) {
            check(
                    ((LeaseImpl) held).key().mode() != Mode.WRITE || !held.isValid() || stallsBegun.get() > 0,
                    "a write hold beside the downgraded read: " + held);
        }
        readers.decrementAndGet();
        unlockQuietly(rw.readLock());
    }

    /** Reads, then leaves. */
    @Operation
    public void read() {
        rw.readLock().lock();
        readers.incrementAndGet();
        check(writers.get() == 0 || stallsBegun.get() > 0, "a reader beside a writer");
        readers.decrementAndGet();
        unlockQuietly(rw.readLock());
    }

    /**
     * The client's scheduler stalls past every lease's local deadline (a GC pause): the clock moves on by
     * more than the lease time and no timer runs; the next {@link #runTimers} catches up.
     */
    @Operation
    public void stall() {
        stallsBegun.incrementAndGet();
        time.advance(TimeUnit.MILLISECONDS.toNanos(LEASE_MILLIS + 1_000));
        stalls.incrementAndGet();
    }

    /** The scheduler runs every timer due: renewal ticks (which find a stalled lease lost), wait deadlines. */
    @Operation
    public void runTimers() {
        time.runDue();
    }

    /** After every caller is done: nothing held at the store or the client, nobody waiting; then closes. */
    @Validate
    public void nothingHeld() {
        check(engine.heldLeases().isEmpty(), "held by the client after all callers are done: " + engine.heldLeases());
        check(engine.acquisitions.noneWaiting(), "a caller still waits after all callers are done");
        for (String name : List.of("x", "rw")) {
            engine.describe(name)
                    .forEach(info -> check(
                            info.holders().isEmpty() || stallsBegun.get() > 0,
                            "held at the store after all callers are done: " + info));
        }
        engine.close();
    }

    /**
     * Model checking: the fixed scenarios, then generated ones. Every caller, timer and store answer runs
     * on the checker's threads, so the checker explores hand-off, expiry and renewal too.
     */
    @Test
    void modelChecking() throws Exception {
        check(withFixedScenarios(new ModelCheckingOptions())
                .iterations(Integer.getInteger("dlock.lincheck.iterations", 1))
                .invocationsPerIteration(Integer.getInteger("dlock.lincheck.invocations", 12))
                .threads(2)
                .actorsPerThread(2)
                .actorsBefore(0)
                .actorsAfter(0));
    }

    /** Stress: the same scenarios on real threads (the test's time still: timers run in its operations). */
    @Test
    void stress() throws Exception {
        check(withFixedScenarios(new StressOptions())
                .iterations(Integer.getInteger("dlock.lincheck.iterations", 1) * 5)
                .invocationsPerIteration(Integer.getInteger("dlock.lincheck.invocations", 12) * 20)
                .threads(3)
                .actorsPerThread(2)
                .actorsBefore(0)
                .actorsAfter(0));
    }

    /**
     * The scenarios that reach each guarded interleaving every time: a downgrade with a writer waiting
     * behind it (a hold must not pass under the downgraded read), two waiters and re-entry (hand-off),
     * re-entry beside a try, re-entry beside a stall (a re-entry into a gone lease must throw), a waiter
     * beside a stall and the timers.
     */
    private static <O extends Options<O, ?>> O withFixedScenarios(O options) {
        return options.addCustomScenario(ModelChecks.parallel(
                        HandOffModelCheckTest.class, List.of("writeThenDowngrade"), List.of("write")))
                .addCustomScenario(ModelChecks.parallel(
                        HandOffModelCheckTest.class, List.of("acquireRelease", "reenter"), List.of("acquireRelease")))
                .addCustomScenario(ModelChecks.parallel(
                        HandOffModelCheckTest.class, List.of("reenter"), List.of("tryAcquireRelease", "reenter")))
                .addCustomScenario(
                        ModelChecks.parallel(HandOffModelCheckTest.class, List.of("reenter"), List.of("stall")))
                .addCustomScenario(ModelChecks.parallel(
                        HandOffModelCheckTest.class, List.of("acquireRelease"), List.of("stall", "runTimers")));
    }

    /**
     * A downgrade beside another thread of the client already waiting for the read lock. Found by this test
     * on the engine before the fix: the downgrade queued behind that reader, which waits for the write hold
     * to end, so both waited forever ({@code lock()}); Lincheck reported the run as hung with the
     * interleaving. A downgrade now goes first in its local queue ({@code LocalQueues#enqueue}).
     */
    @Test
    void downgradeBesideAQueuedReader() throws Exception {
        check(new ModelCheckingOptions()
                .addCustomScenario(ModelChecks.parallel(
                        HandOffModelCheckTest.class, List.of("writeThenDowngrade"), List.of("read")))
                .iterations(0)
                .invocationsPerIteration(Integer.getInteger("dlock.lincheck.invocations", 12) * 5));
    }

    private static void check(Options<?, ?> options) {
        ModelChecks.check(options, HandOffModelCheckTest.class, HandOffSpec.class);
    }

    /** The sequential specification: every operation returns normally. */
    public static final class HandOffSpec {
        public void acquireRelease() {}

        public void tryAcquireRelease() {}

        public void reenter() {}

        public void write() {}

        public void writeThenDowngrade() {}

        public void read() {}

        public void stall() {}

        public void runTimers() {}
    }
}
