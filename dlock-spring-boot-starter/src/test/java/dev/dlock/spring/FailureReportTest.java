package dev.dlock.spring;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;

import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.extension.ExtendWith;
import org.springframework.boot.SpringBootConfiguration;
import org.springframework.boot.WebApplicationType;
import org.springframework.boot.autoconfigure.ImportAutoConfiguration;
import org.springframework.boot.builder.SpringApplicationBuilder;
import org.springframework.boot.test.system.CapturedOutput;
import org.springframework.boot.test.system.OutputCaptureExtension;

/** A bad {@code dlock.uri}, as a new user meets it: Spring Boot's failure report, naming the property. */
@ExtendWith(OutputCaptureExtension.class)
class FailureReportTest {
    private static final String SENTINEL = "s3ntinel-Pa55";

    /** The test class path has a DataSource and Redis; this application has only dlock. */
    @SpringBootConfiguration
    @ImportAutoConfiguration({
        DlockAutoConfiguration.class,
        DlockMetricsAutoConfiguration.class,
        DlockActuatorAutoConfiguration.class
    })
    static class App {}

    @Test
    void unknownSchemeEndsInTheFailureReportNamingDlockUri(CapturedOutput output) {
        assertThatThrownBy(() -> new SpringApplicationBuilder(App.class)
                        .web(WebApplicationType.NONE)
                        .properties("dlock.uri=foo://admin:" + SENTINEL + "@x", "spring.main.banner-mode=off")
                        .run())
                .hasRootCauseInstanceOf(DlockUriFailureAnalyzer.InvalidUriException.class);
        assertThat(output.getAll()).contains("APPLICATION FAILED TO START");
        String report = output.getAll().substring(output.getAll().indexOf("APPLICATION FAILED TO START"));
        assertThat(report)
                .contains("Invalid value 'foo://admin:****@x' for configuration property 'dlock.uri'")
                .contains("no dlock backend on the class path accepts URIs of scheme 'foo:'")
                .contains("Action:")
                .contains("redis://localhost:6379 (dlock-redis)");
        for (String backend :
                new String[] {"RedisBackendProvider", "ZooKeeperBackendProvider", "JdbcBackendProvider"}) {
            int first = report.indexOf(backend);
            assertThat(first).as("%s listed in %s", backend, report).isNotNegative();
            assertThat(report.indexOf(backend, first + 1))
                    .as("%s listed once", backend)
                    .isNegative();
        }
        assertThat(output.getAll()).doesNotContain(SENTINEL);
    }
}
