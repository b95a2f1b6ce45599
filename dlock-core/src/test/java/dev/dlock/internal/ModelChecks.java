package dev.dlock.internal;

import java.lang.reflect.Method;
import java.util.List;
import java.util.concurrent.TimeUnit;
import kotlin.Unit;
import org.jetbrains.kotlinx.lincheck.Actor;
import org.jetbrains.kotlinx.lincheck.execution.ExecutionScenario;
import org.jetbrains.lincheck.datastructures.DSLScenarioBuilder;
import org.jetbrains.lincheck.datastructures.ManagedStrategyGuarantee;
import org.jetbrains.lincheck.datastructures.ManagedStrategyGuaranteeKt;
import org.jetbrains.lincheck.datastructures.Options;

/** What the engine's Lincheck tests share: building a scenario by operation names, and running a check. */
final class ModelChecks {
    private ModelChecks() {}

    /**
     * A scenario of these threads, each running the named operations of {@code test} in order.
     *
     * @param threads one list of operation names per thread
     */
    @SafeVarargs
    static ExecutionScenario parallel(Class<?> test, List<String>... threads) {
        DSLScenarioBuilder scenario = new DSLScenarioBuilder();
        scenario.parallel(p -> {
            for (List<String> operations : threads) {
                p.thread(t -> {
                    for (String operation : operations) {
                        try {
                            Method m = test.getMethod(operation);
                            t.add(new Actor(m, List.of(), false, false, false, false, false));
                        } catch (NoSuchMethodException e) {
                            throw new IllegalArgumentException(operation, e);
                        }
                    }
                    return Unit.INSTANCE;
                });
            }
            return Unit.INSTANCE;
        });
        return scenario.buildScenario();
    }

    /**
     * The drawing of an owner id ({@code wait.OwnerIds}) as one step of the checker, with no switch point
     * inside. It writes 32 hex digits into a per-thread scratch array in a loop; the checker sees each
     * write as a shared one, takes the loop for a spin lock at its tenth round ("switch (reason: active
     * lock detected)") and switches away at the start of every wait. With that, in 300 interleavings of
     * two callers that each wait and release, the second never asked while the first held the lock
     * (docs/models.md). The array is the thread's own, so no interleaving inside it matters.
     */
    static ManagedStrategyGuarantee ownerIdsAtomic() {
        return ManagedStrategyGuaranteeKt.forClasses("dev.dlock.internal.wait.OwnerIds")
                .allMethods()
                .treatAsAtomic();
    }

    /**
     * Runs the check of {@code test} against {@code spec}, the sequential specification (every operation
     * returns normally, so the engine never runs sequentially on the checker's behalf).
     */
    static void check(Options<?, ?> options, Class<?> test, Class<?> spec) {
        // Lincheck reports a run as hung after its invocation timeout; on a loaded shared machine the
        // first runs (while it instruments the classes) take longer than its default, so allow more.
        // (A public Kotlin method whose name Kotlin mangles as module-internal.)
        options.invocationTimeout$lincheck(TimeUnit.SECONDS.toMillis(120));
        options.sequentialSpecification(spec);
        options.check(test);
    }
}
