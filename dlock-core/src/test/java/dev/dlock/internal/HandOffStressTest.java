package dev.dlock.internal;

import org.jetbrains.lincheck.datastructures.StressOptions;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.Timeout;

/**
 * {@link HandOffScenarios} on real threads and the real clock (its own JVM, without the model checker's
 * ticking clock), where holds are handed on as in production, time-based bounds included.
 */
@Timeout(600)
public class HandOffStressTest extends HandOffScenarios {
    /** The fixed scenarios and generated ones, 5x the scenarios and 20x the runs of the model check. */
    @Test
    void stress() throws Exception {
        run(
                withFixedScenarios(new StressOptions())
                        .iterations(Integer.getInteger("dlock.lincheck.iterations", 1) * 5)
                        .invocationsPerIteration(Integer.getInteger("dlock.lincheck.invocations", 12) * 20)
                        .threads(3)
                        .actorsPerThread(2)
                        .actorsBefore(0)
                        .actorsAfter(0),
                HandOffStressTest.class);
    }
}
