package dev.dlock.spring;

import dev.dlock.LockClient;
import io.micrometer.core.instrument.MeterRegistry;
import org.springframework.boot.autoconfigure.AutoConfiguration;
import org.springframework.boot.autoconfigure.condition.ConditionalOnBean;
import org.springframework.boot.autoconfigure.condition.ConditionalOnBooleanProperty;
import org.springframework.boot.autoconfigure.condition.ConditionalOnClass;
import org.springframework.boot.context.properties.EnableConfigurationProperties;
import org.springframework.context.annotation.Bean;

/**
 * Micrometer meters for dlock when the application has a {@link MeterRegistry}: a {@link
 * dev.dlock.LockListener} that the auto-configured {@link LockClient} reports to, and the active-lease
 * gauges. Meter names and tags are listed in the module's documentation; {@code
 * dlock.metrics.name-patterns} bounds the {@code name} tag.
 */
@AutoConfiguration(
        after = DlockAutoConfiguration.class,
        afterName = "org.springframework.boot.micrometer.metrics.autoconfigure.CompositeMeterRegistryAutoConfiguration")
@ConditionalOnClass(MeterRegistry.class)
@ConditionalOnBooleanProperty(name = "dlock.metrics.enabled", matchIfMissing = true)
@EnableConfigurationProperties(DlockProperties.class)
public class DlockMetricsAutoConfiguration {
    /** Creates the configuration (called by Spring). */
    public DlockMetricsAutoConfiguration() {}

    @Bean
    @ConditionalOnBean(MeterRegistry.class)
    NamePatterns dlockNamePatterns(DlockProperties properties) {
        return new NamePatterns(properties.getMetrics().getNamePatterns());
    }

    @Bean
    @ConditionalOnBean(MeterRegistry.class)
    MicrometerLockListener dlockMetricsListener(MeterRegistry registry, NamePatterns patterns) {
        return new MicrometerLockListener(registry, patterns);
    }

    @Bean
    @ConditionalOnBean({MeterRegistry.class, LockClient.class})
    ActiveLeaseGauges dlockActiveLeaseGauges(LockClient client, MeterRegistry registry, NamePatterns patterns) {
        return new ActiveLeaseGauges(client, registry, patterns);
    }
}
