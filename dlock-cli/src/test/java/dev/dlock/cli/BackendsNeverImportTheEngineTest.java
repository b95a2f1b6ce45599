package dev.dlock.cli;

import static com.tngtech.archunit.lang.syntax.ArchRuleDefinition.noClasses;

import com.tngtech.archunit.core.domain.JavaClasses;
import com.tngtech.archunit.core.importer.ClassFileImporter;
import com.tngtech.archunit.core.importer.ImportOption;
import org.junit.jupiter.api.Test;

/**
 * Backends see the engine only through the SPI: no class of a backend module refers to {@code
 * dev.dlock.internal}. Here because this module's test class path holds every backend.
 */
class BackendsNeverImportTheEngineTest {
    @Test
    void noBackendImportsTheEngine() {
        JavaClasses backends = new ClassFileImporter()
                .withImportOption(ImportOption.Predefined.DO_NOT_INCLUDE_TESTS)
                .importPackages("dev.dlock.redis", "dev.dlock.zookeeper", "dev.dlock.jdbc", "dev.dlock.etcd");
        noClasses()
                .should()
                .dependOnClassesThat()
                .resideInAPackage("dev.dlock.internal..")
                .because("a backend sees the engine only through dev.dlock.spi")
                .allowEmptyShould(false)
                .check(backends);
    }
}
