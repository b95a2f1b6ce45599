package dev.dlock.spring;

import dev.dlock.LockClient;
import org.springframework.beans.factory.ObjectProvider;
import org.springframework.boot.actuate.autoconfigure.endpoint.condition.ConditionalOnAvailableEndpoint;
import org.springframework.boot.autoconfigure.AutoConfiguration;
import org.springframework.boot.autoconfigure.condition.ConditionalOnBean;
import org.springframework.boot.autoconfigure.condition.ConditionalOnClass;
import org.springframework.boot.autoconfigure.condition.ConditionalOnMissingBean;
import org.springframework.boot.health.autoconfigure.contributor.ConditionalOnEnabledHealthIndicator;
import org.springframework.context.annotation.Bean;
import org.springframework.context.annotation.Configuration;

/**
 * Actuator support: the {@code dlock} health indicator (with spring-boot-health, switched off by {@code
 * management.health.dlock.enabled=false}) and the {@code dlock} endpoint (with spring-boot-actuator,
 * available when exposed and accessible like any endpoint).
 */
@AutoConfiguration(after = DlockAutoConfiguration.class)
public class DlockActuatorAutoConfiguration {
    /** Creates the configuration (called by Spring). */
    public DlockActuatorAutoConfiguration() {}

    /** The health indicator, named {@code dlock} after its bean. */
    @Configuration(proxyBeanMethods = false)
    @ConditionalOnClass(
            name = {
                "org.springframework.boot.health.contributor.HealthIndicator",
                "org.springframework.boot.health.autoconfigure.contributor.ConditionalOnEnabledHealthIndicator"
            })
    @ConditionalOnBean(LockClient.class)
    @ConditionalOnEnabledHealthIndicator("dlock")
    static class HealthConfiguration {
        @Bean
        @ConditionalOnMissingBean(name = "dlockHealthIndicator")
        DlockHealthIndicator dlockHealthIndicator(LockClient client, ObjectProvider<DlockStore> store) {
            DlockStore chosen = store.getIfAvailable();
            return new DlockHealthIndicator(
                    client, chosen != null ? chosen.description() : "the application's LockClient bean");
        }
    }

    /** The endpoint. */
    @Configuration(proxyBeanMethods = false)
    @ConditionalOnClass(
            name = {
                "org.springframework.boot.actuate.endpoint.annotation.Endpoint",
                "org.springframework.boot.actuate.autoconfigure.endpoint.condition.ConditionalOnAvailableEndpoint"
            })
    @ConditionalOnBean(LockClient.class)
    @ConditionalOnAvailableEndpoint(DlockEndpoint.class)
    static class EndpointConfiguration {
        @Bean
        @ConditionalOnMissingBean
        DlockEndpoint dlockEndpoint(LockClient client) {
            return new DlockEndpoint(client);
        }
    }
}
