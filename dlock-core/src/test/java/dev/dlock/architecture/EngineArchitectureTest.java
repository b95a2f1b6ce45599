package dev.dlock.architecture;

import static com.tngtech.archunit.base.DescribedPredicate.not;
import static com.tngtech.archunit.core.domain.JavaClass.Predicates.resideInAPackage;
import static com.tngtech.archunit.core.domain.JavaClass.Predicates.type;
import static com.tngtech.archunit.lang.syntax.ArchRuleDefinition.classes;
import static com.tngtech.archunit.lang.syntax.ArchRuleDefinition.noClasses;
import static com.tngtech.archunit.library.dependencies.SlicesRuleDefinition.slices;

import com.tngtech.archunit.core.domain.JavaClasses;
import com.tngtech.archunit.core.importer.ClassFileImporter;
import com.tngtech.archunit.core.importer.ImportOption;
import dev.dlock.internal.Engine;
import dev.dlock.internal.EngineOptions;
import dev.dlock.internal.base.Checks;
import java.util.List;
import org.junit.jupiter.api.Test;

/**
 * The engine's structure, checked from the compiled classes of dlock-core: its slices (the sub-packages
 * of {@code dev.dlock.internal}) in one order, every reference running from a later slice to an earlier
 * one, and the public packages kept apart from the implementation. The order, lowest first, is {@link
 * #ORDER}; docs/architecture.md describes what each slice holds.
 */
class EngineArchitectureTest {
    /** The engine's layers, lowest first: each may refer to those before it, never to those after it. */
    static final List<String> ORDER = List.of(
            "dev.dlock.internal.base..",
            "dev.dlock.internal.store..",
            "dev.dlock.internal.lease..",
            "dev.dlock.internal.wait..",
            "dev.dlock.internal.view..",
            "dev.dlock.internal");

    private static final JavaClasses CORE = new ClassFileImporter()
            .withImportOption(ImportOption.Predefined.DO_NOT_INCLUDE_TESTS)
            .importPackages("dev.dlock");

    @Test
    void theEnginesSlicesHaveNoCycles() {
        slices().matching("dev.dlock.internal.(*)..").should().beFreeOfCycles().check(CORE);
    }

    @Test
    void noLayerRefersToALaterOne() {
        for (int i = 0; i < ORDER.size() - 1; i++) {
            String[] later = ORDER.subList(i + 1, ORDER.size()).toArray(String[]::new);
            noClasses()
                    .that()
                    .resideInAPackage(ORDER.get(i))
                    .should()
                    .dependOnClassesThat()
                    .resideInAnyPackage(later)
                    .because("the engine's layers run one way: " + ORDER)
                    .check(CORE);
        }
    }

    @Test
    void theLockViewsNeverSeeTheEngine() {
        noClasses()
                .that()
                .resideInAPackage("dev.dlock.internal.view..")
                .should()
                .dependOnClassesThat()
                .areAssignableTo(Engine.class)
                .because("a view gets the parts it uses, never the engine")
                .check(CORE);
    }

    @Test
    void thePublicApiImportsNoImplementation() {
        noClasses()
                .that()
                .resideInAnyPackage("dev.dlock", "dev.dlock.mem", "dev.dlock.spi..")
                .and()
                .haveNameNotMatching("dev\\.dlock\\.LockClient(\\$.*)?")
                .should()
                .dependOnClassesThat()
                .resideInAPackage("dev.dlock.internal..")
                .check(CORE);
    }

    /** The one exception: the client builds its engine from its options, checked as they are set. */
    @Test
    void theClientReachesOnlyTheEnginesAssemblyItsOptionsAndTheirChecks() {
        noClasses()
                .that()
                .haveNameMatching("dev\\.dlock\\.LockClient(\\$.*)?")
                .should()
                .dependOnClassesThat(resideInAPackage("dev.dlock.internal..")
                        .and(not(type(Engine.class)))
                        .and(not(type(EngineOptions.class)))
                        .and(not(type(Checks.class))))
                .check(CORE);
    }

    @Test
    void theSpiImportsNothingButTheApiAndTheJdk() {
        classes()
                .that()
                .resideInAPackage("dev.dlock.spi..")
                .should()
                .onlyDependOnClassesThat()
                .resideInAnyPackage("dev.dlock", "dev.dlock.spi..", "java..")
                .check(CORE);
    }
}
