package dev.dlock.internal;

import static dev.dlock.internal.HandOffModelCheckTest.check;

import dev.dlock.DistributedLock;
import dev.dlock.Lease;
import dev.dlock.LockException;
import dev.dlock.internal.lease.Terms;
import dev.dlock.internal.wait.Acquisition;
import dev.dlock.mem.FreshMemoryStore;
import dev.dlock.spi.LockBackendFactory;
import dev.dlock.spi.LockKey;
import dev.dlock.spi.Mode;
import java.time.Duration;
import java.util.List;
import java.util.concurrent.CompletionException;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.atomic.AtomicInteger;
import java.util.concurrent.atomic.AtomicReference;
import org.jetbrains.kotlinx.lincheck.execution.ExecutionScenario;
import org.jetbrains.lincheck.datastructures.ModelCheckingOptions;
import org.jetbrains.lincheck.datastructures.Operation;
import org.jetbrains.lincheck.datastructures.Validate;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.Timeout;

/**
 * Lincheck over the engine when a store answer comes late ({@link LateAnswer}: the first acquire of
 * 'late' reaches the store only when a caller delivers it), on a time the test moves ({@link ManualTime}):
 * the answer may land after the lease's local deadline passed (a scheduler stall), or as the call's
 * operation timeout fires. Only the fixed scenarios run (an operation here waits for another one to
 * deliver, so a generated scenario without a delivery would wait forever by design).
 *
 * <p>The promises, checked when every caller is done ({@link #nothingHeld}): a lease a caller was handed
 * and still holds valid is held at the store (an answer is either the caller's or given back, never
 * both); nothing else is held at the store or the client, nobody waits; no caller waits forever (the
 * checker reports a run in which every unfinished caller waits). The sequential specification: every
 * operation returns normally.
 */
@Timeout(600)
public class LateAnswerModelCheckTest {
    private static final long TIMEOUT_MILLIS =
            HandOffModelCheckTest.OPTIONS.operationTimeout().toMillis();

    private final ManualTime time = new ManualTime();
    private final AtomicReference<LateAnswer> backend = new AtomicReference<>();
    private final LockBackendFactory factory = context -> backend.updateAndGet(
            none -> new LateAnswer(FreshMemoryStore.factory().open(context), "late", 1));
    private final Engine engine = Engine.open(factory, HandOffModelCheckTest.OPTIONS, time);
    private final DistributedLock lock = engine.lock("late");
    private static final Terms TERMS = new Terms(
            new LockKey(HandOffModelCheckTest.OPTIONS.namespace(), "late", Mode.EXCLUSIVE),
            HandOffModelCheckTest.OPTIONS.leaseMillis(),
            true,
            1);
    /** A lease handed to a caller and kept until every caller is done. */
    private final AtomicReference<Lease> kept = new AtomicReference<>();
    /**
     * Stalls begun (counted before the clock moves) and done (after): a lease handed over after a caller's
     * start may be invalid only if a stall begun by then was not done when the caller started.
     */
    private final AtomicInteger stallsBegun = new AtomicInteger();

    private final AtomicInteger stalls = new AtomicInteger();

    /**
     * Tries once (one store call, bounded by the operation timeout, as {@code tryAcquire()} does), then lets
     * the call reach the store: its answer arrives on this thread, unless the timeout ended the call first.
     * A lease handed over is kept until every caller is done.
     */
    @Operation
    public void tryThenDeliver() {
        Acquisition attempt = engine.acquisitions.start(TERMS, Duration.ZERO, null);
        deliver();
        try {
            kept.set(attempt.result().join()); // ended by its answer, or by the timeout (maybe still reacting)
        } catch (CompletionException noAnswerInTime) {
            // the timeout ended the call first: its answer is given back
        }
    }

    /** Waits for the lock; a lease handed over must be valid (unless a stall came meanwhile); releases. */
    @Operation
    public void acquireLate() {
        int stallsBefore = stalls.get();
        Lease lease = lock.acquire(Duration.ofSeconds(60));
        check(lease.isValid() || stallsBegun.get() > stallsBefore, "a hold handed over invalid: " + lease);
        try {
            lease.close();
        } catch (LockException lostInAStall) {
            check(!lease.isValid(), "a valid lease's release failed: " + lostInAStall);
        }
    }

    /** The store gets the held acquire now, and its answer arrives on this thread. */
    @Operation
    public void deliver() {
        backend.get().deliver();
    }

    /** The scheduler stalls past every lease's local deadline: the clock moves on, no timer runs. */
    @Operation
    public void stall() {
        stallsBegun.incrementAndGet();
        time.advance(TimeUnit.MILLISECONDS.toNanos(HandOffModelCheckTest.OPTIONS.leaseMillis() + 1_000));
        stalls.incrementAndGet();
    }

    /** The operation timeout passes and the scheduler runs every timer due (the store call's timeout). */
    @Operation
    public void timeOut() {
        time.advance(TimeUnit.MILLISECONDS.toNanos(TIMEOUT_MILLIS + 1_000));
        time.runDue();
    }

    /** When every caller is done: a kept valid lease is held at the store; then nothing else is held. */
    @Validate
    public void nothingHeld() {
        Lease lease = kept.get();
        if (lease != null && lease.isValid()) {
            check(
                    engine.describe("late").stream()
                            .anyMatch(info -> !info.holders().isEmpty()),
                    "a caller holds a valid lease the store let go: " + lease);
            lease.close();
        }
        check(engine.heldLeases().isEmpty(), "held by the client after all callers are done: " + engine.heldLeases());
        check(engine.acquisitions.noneWaiting(), "a caller still waits after all callers are done");
        engine.describe("late")
                .forEach(info ->
                        check(info.holders().isEmpty(), "held at the store after all callers are done: " + info));
        engine.close();
    }

    /**
     * The answer to a try races the call's timeout: the caller gets it, or it is given back, never both.
     * The race's window is a few steps of the timeout's task, so this scenario gets many interleavings:
     * with the give-back decided by the timeout instead of by who completes the call first, the checker
     * needed between 150 and 300 (docs/models.md), and gets 300.
     */
    @Test
    void anAnswerRacesItsTimeout() {
        explore(
                ModelChecks.parallel(LateAnswerModelCheckTest.class, List.of("tryThenDeliver"), List.of("timeOut")),
                Integer.getInteger("dlock.lincheck.invocations", 12) * 25);
    }

    /** The answer to a wait's attempt comes after a stall took the lease's deadline past: given back, asked again. */
    @Test
    void anAnswerAfterTheLeasesDeadline() {
        explore(
                ModelChecks.parallel(
                        LateAnswerModelCheckTest.class, List.of("acquireLate"), List.of("stall"), List.of("deliver")),
                Integer.getInteger("dlock.lincheck.invocations", 12) * 2);
    }

    private static void explore(ExecutionScenario scenario, int invocations) {
        ModelChecks.check(
                new ModelCheckingOptions()
                        .addCustomScenario(scenario)
                        .iterations(0)
                        .invocationsPerIteration(invocations),
                LateAnswerModelCheckTest.class,
                LateSpec.class);
    }

    /** The sequential specification: every operation returns normally. */
    public static final class LateSpec {
        public void tryThenDeliver() {}

        public void acquireLate() {}

        public void deliver() {}

        public void stall() {}

        public void timeOut() {}
    }
}
