package dev.dlock.spring;

import dev.dlock.LockClient;
import dev.dlock.micrometer.MicrometerLockListener;
import io.micrometer.core.instrument.MeterRegistry;
import org.springframework.beans.factory.SmartInitializingSingleton;
import org.springframework.boot.autoconfigure.AutoConfiguration;
import org.springframework.boot.autoconfigure.condition.ConditionalOnBean;
import org.springframework.boot.autoconfigure.condition.ConditionalOnBooleanProperty;
import org.springframework.boot.autoconfigure.condition.ConditionalOnClass;
import org.springframework.boot.autoconfigure.condition.ConditionalOnMissingBean;
import org.springframework.boot.context.properties.EnableConfigurationProperties;
import org.springframework.context.annotation.Bean;

/**
 * Micrometer meters for dlock when the application has a {@link MeterRegistry} and dlock-micrometer: a
 * {@link MicrometerLockListener} bean that the auto-configured {@link LockClient} reports to (an application
 * that builds its own client can pass the bean to it), and the active-lease gauges. Meter names and tags
 * are listed in the module's documentation; {@code dlock.metrics.name-patterns} bounds the {@code name}
 * tag.
 */
@AutoConfiguration(
        after = DlockAutoConfiguration.class,
        afterName = "org.springframework.boot.micrometer.metrics.autoconfigure.CompositeMeterRegistryAutoConfiguration")
@ConditionalOnClass({MeterRegistry.class, MicrometerLockListener.class})
@ConditionalOnBooleanProperty(name = "dlock.metrics.enabled", matchIfMissing = true)
@EnableConfigurationProperties(DlockProperties.class)
public class DlockMetricsAutoConfiguration {
    /** Creates the configuration (called by Spring). */
    public DlockMetricsAutoConfiguration() {}

    @Bean
    @ConditionalOnBean(MeterRegistry.class)
    @ConditionalOnMissingBean
    MicrometerLockListener dlockMetricsListener(MeterRegistry registry, DlockProperties properties) {
        return MicrometerLockListener.builder(registry)
                .namePatterns(properties.getMetrics().getNamePatterns())
                .build();
    }

    @Bean
    @ConditionalOnBean({MeterRegistry.class, LockClient.class})
    SmartInitializingSingleton dlockActiveLeaseGauges(LockClient client, MicrometerLockListener metrics) {
        return () -> metrics.bindActiveLeases(client);
    }
}
