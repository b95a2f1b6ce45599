package dev.dlock.spring;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;

import org.junit.jupiter.api.extension.ExtendWith;
import org.junit.jupiter.params.ParameterizedTest;
import org.junit.jupiter.params.provider.CsvSource;
import org.springframework.boot.SpringBootConfiguration;
import org.springframework.boot.WebApplicationType;
import org.springframework.boot.autoconfigure.ImportAutoConfiguration;
import org.springframework.boot.builder.SpringApplicationBuilder;
import org.springframework.boot.context.properties.bind.validation.BindValidationException;
import org.springframework.boot.test.system.CapturedOutput;
import org.springframework.boot.test.system.OutputCaptureExtension;

/**
 * A bad value of each {@code dlock.*} property stops the start with Spring Boot's failure report naming
 * the property, the value as written and the rule, before any bean uses it.
 */
@ExtendWith(OutputCaptureExtension.class)
class PropertyValidationTest {
    @SpringBootConfiguration
    @ImportAutoConfiguration(DlockAutoConfiguration.class)
    static class App {}

    @ParameterizedTest(name = "{0}={1}")
    @CsvSource(
            delimiter = '|',
            value = {
                "dlock.lease-time          | -5s       | leaseTime must be positive",
                "dlock.lease-time          | 400d      | leaseTime must be at most",
                "dlock.wait-time           | -1s       | waitTime must",
                "dlock.operation-timeout   | 0         | operationTimeout must",
                "dlock.local-queue-limit   | 0         | localQueueLimit must be at least 1",
                "dlock.namespace           | my app    | namespace must be 1 to 64 characters",
                "dlock.redis.replica-acks  | -1        | must be 0 (no acknowledgements) or more",
                "dlock.redis.replica-ack-timeout | 0ms | must be positive",
                "dlock.redis.max-lease     | 0s        | must be positive",
                "dlock.redis.max-lease     | 10s       | must be at least dlock.lease-time",
                "dlock.jdbc.threads        | 0         | must be between 1 and 64",
                "dlock.jdbc.threads        | 65        | must be between 1 and 64",
                "dlock.jdbc.table-prefix   | 1locks_   | must be 1 to 40 characters of a-z, 0-9 and '_'",
            })
    void aBadValueEndsInTheFailureReportNamingPropertyValueAndRule(
            String property, String value, String rule, CapturedOutput output) {
        assertThatThrownBy(() -> new SpringApplicationBuilder(App.class)
                        .web(WebApplicationType.NONE)
                        .properties("dlock.uri=mem:props", "spring.main.banner-mode=off", property + "=" + value)
                        .run())
                .hasRootCauseInstanceOf(BindValidationException.class);
        String all = output.getAll();
        assertThat(all).contains("APPLICATION FAILED TO START");
        String report = all.substring(all.indexOf("APPLICATION FAILED TO START"));
        assertThat(report)
                .contains("Invalid value '" + value + "' for configuration property '" + property + "'")
                .contains(rule);
    }
}
