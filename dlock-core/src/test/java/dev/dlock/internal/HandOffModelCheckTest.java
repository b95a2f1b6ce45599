package dev.dlock.internal;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;

import dev.dlock.internal.base.Nanos;
import org.jetbrains.lincheck.datastructures.ManagedStrategyGuarantee;
import org.jetbrains.lincheck.datastructures.ManagedStrategyGuaranteeKt;
import org.jetbrains.lincheck.datastructures.ModelCheckingOptions;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.Timeout;

/**
 * Lincheck's model checker over {@link HandOffScenarios}: the fixed scenarios and generated ones explore
 * queueing, re-entry, downgrades, release to the store and hand-off.
 *
 * <p>The engine's clock: Lincheck answers every {@code System.nanoTime()} with one constant, so no waiter
 * would ever have asked before a hold's last confirmation, and no hold would be handed on. This class's
 * JVM (a fork per test class, see the module's pom) runs the engine on its ticking test clock instead
 * ({@code Nanos}: one more on each reading, from 1 in each run), which orders the engine's events;
 * {@link #theModelCheckerHandsHoldsOn} shows that holds are handed on. Time-based bounds (a chain's time
 * limit, the short yield after a chain ended at its bound) are never reached on that clock: they are
 * {@link HandOffStressTest}'s and {@code CohortTest}'s.
 */
@Timeout(600)
public class HandOffModelCheckTest extends HandOffScenarios {
    /** The engine's clock readings are no events to interleave or to compare between a run and its replay. */
    private static final ManagedStrategyGuarantee CLOCK_IS_NO_EVENT = ManagedStrategyGuaranteeKt.forClasses(
                    Nanos.class.getName())
            .allMethods()
            .ignore();

    static {
        // Before any engine class is loaded in this JVM: Nanos reads it once.
        System.setProperty("dlock.test.tickingClock", "Lincheck-"); // the names of the threads it checks
    }

    private static ModelCheckingOptions options() {
        return new ModelCheckingOptions().addGuarantee(CLOCK_IS_NO_EVENT);
    }

    /** The fixed scenarios, then generated ones. */
    @Test
    void modelChecking() throws Exception {
        assertThat(Nanos.ticking())
                .as("the engine runs on the ticking test clock in this JVM")
                .isTrue();
        run(
                withFixedScenarios(options())
                        .iterations(Integer.getInteger("dlock.lincheck.iterations", 1))
                        .invocationsPerIteration(Integer.getInteger("dlock.lincheck.invocations", 12))
                        .threads(2)
                        .actorsPerThread(2)
                        .actorsBefore(0)
                        .actorsAfter(0),
                HandOffModelCheckTest.class);
    }

    /**
     * The checker reaches hand-off: with the probe on, a caller given a handed-on hold throws, and the
     * checker must find such an interleaving of two waiters and replay it. On {@code System.nanoTime()}
     * (Lincheck's constant; seen failing so) it saw a hand-off only in a run it could not replay
     * ("Non-determinism found"): the pass then hung on readings of threads it does not control.
     */
    @Test
    void theModelCheckerHandsHoldsOn() {
        probeHandOff = true;
        try {
            assertThatThrownBy(() -> run(
                            options()
                                    .addCustomScenario(
                                            parallel(new String[] {"acquireRelease"}, new String[] {"acquireRelease"}))
                                    .iterations(0)
                                    .invocationsPerIteration(Integer.getInteger("dlock.lincheck.invocations", 12)),
                            HandOffModelCheckTest.class))
                    .hasMessageContaining("probe: a hold of 'x' was handed on")
                    .hasMessageContaining("The following interleaving leads to the error")
                    .hasMessageNotContaining("Non-determinism");
        } finally {
            probeHandOff = false;
        }
    }

    /**
     * A downgrade beside another thread of the client already waiting for the read lock. Found by this test
     * on the engine before the fix: the downgrade queued behind that reader, which waits for the write hold
     * to end, so both waited forever ({@code lock()}); Lincheck reported the run as hung with the
     * interleaving (within 60 interleavings, about 30 s; 5 were not enough). A downgrade now goes first in
     * its local queue ({@code LocalQueues#enqueue}).
     */
    @Test
    void downgradeBesideAQueuedReader() throws Exception {
        run(
                options()
                        .addCustomScenario(parallel(new String[] {"writeThenDowngrade"}, new String[] {"read"}))
                        .iterations(0)
                        .invocationsPerIteration(Integer.getInteger("dlock.lincheck.invocations", 12) * 5),
                HandOffModelCheckTest.class);
    }
}
