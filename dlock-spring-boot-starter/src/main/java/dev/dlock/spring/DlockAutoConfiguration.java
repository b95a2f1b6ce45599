package dev.dlock.spring;

import dev.dlock.LockClient;
import dev.dlock.LockListener;
import dev.dlock.spi.LockBackendFactory;
import java.util.List;
import org.springframework.aop.config.AopConfigUtils;
import org.springframework.beans.factory.ListableBeanFactory;
import org.springframework.beans.factory.ObjectProvider;
import org.springframework.beans.factory.config.BeanDefinition;
import org.springframework.beans.factory.support.BeanDefinitionRegistry;
import org.springframework.boot.autoconfigure.AutoConfiguration;
import org.springframework.boot.autoconfigure.condition.ConditionalOnBooleanProperty;
import org.springframework.boot.autoconfigure.condition.ConditionalOnMissingBean;
import org.springframework.boot.context.properties.EnableConfigurationProperties;
import org.springframework.context.EnvironmentAware;
import org.springframework.context.annotation.Bean;
import org.springframework.context.annotation.Configuration;
import org.springframework.context.annotation.Import;
import org.springframework.context.annotation.ImportBeanDefinitionRegistrar;
import org.springframework.context.annotation.Role;
import org.springframework.core.env.Environment;
import org.springframework.core.type.AnnotationMetadata;

/**
 * Auto-configuration of the {@link LockClient} bean and the {@link WithLock} and {@link OnLeader}
 * annotations.
 *
 * <p>The client is built from {@link DlockProperties} and connected to the store chosen by {@code
 * dlock.uri}, a {@link LockBackendFactory} bean, or the application's own store client (see {@link
 * DlockBackendsConfiguration}). Every {@link LockListener} bean receives its events, every {@link
 * LockClientBuilderCustomizer} bean may adjust it, and unless {@code dlock.startup-check=false} the
 * application does not start when the store does not answer. An application that defines its own {@link
 * LockClient} bean keeps it; the annotation, health indicator and endpoint then use that one.
 */
@AutoConfiguration(
        afterName = {
            "org.springframework.boot.data.redis.autoconfigure.DataRedisAutoConfiguration",
            "org.springframework.boot.jdbc.autoconfigure.DataSourceAutoConfiguration"
        })
@EnableConfigurationProperties(DlockProperties.class)
@Import(DlockBackendsConfiguration.class)
public class DlockAutoConfiguration {
    /** Creates the configuration (called by Spring). */
    public DlockAutoConfiguration() {}

    @Bean
    @ConditionalOnMissingBean(LockClient.class)
    DlockStore dlockStore(
            DlockProperties properties, ListableBeanFactory beans, ObjectProvider<BackendCandidate> candidates) {
        return DlockStore.choose(properties, beans.getBeansOfType(LockBackendFactory.class), () -> candidates
                .orderedStream()
                .toList());
    }

    @Bean
    @ConditionalOnMissingBean
    LockClient dlockClient(
            DlockStore store,
            DlockProperties properties,
            ObjectProvider<LockListener> listeners,
            ObjectProvider<LockClientBuilderCustomizer> customizers) {
        LockClient.Builder builder = store.builder()
                .namespace(properties.getNamespace())
                .leaseTime(properties.getLeaseTime())
                .waitTime(properties.getWaitTime())
                .operationTimeout(properties.getOperationTimeout())
                .renewal(properties.isRenewal());
        if (properties.getLocalQueueLimit() != null) {
            builder.localQueueLimit(properties.getLocalQueueLimit());
        }
        List<LockListener> all = listeners.orderedStream().toList();
        LockListener listener = CompositeLockListener.of(all);
        if (listener != null) {
            builder.listener(listener);
        }
        customizers.orderedStream().forEach(customizer -> customizer.customize(builder));
        return store.connect(builder, properties.isStartupCheck());
    }

    /** The advisor that applies {@link WithLock}; infrastructure, so that it is created early. */
    @Configuration(proxyBeanMethods = false)
    @ConditionalOnBooleanProperty(name = "dlock.aop.enabled", matchIfMissing = true)
    @Role(BeanDefinition.ROLE_INFRASTRUCTURE)
    @Import(AutoProxyRegistrar.class)
    static class AnnotationConfiguration {
        @Bean
        @Role(BeanDefinition.ROLE_INFRASTRUCTURE)
        static WithLockAdvisor withLockAdvisor(
                ObjectProvider<LockClient> client,
                ObjectProvider<DlockProperties> properties,
                Environment environment,
                ListableBeanFactory beanFactory) {
            int order = environment.getProperty("dlock.aop.order", Integer.class, DlockAopProperties.DEFAULT_ORDER);
            return new WithLockAdvisor(client, properties, beanFactory, order);
        }

        /** Outside {@link WithLock} on the same method: a call skipped on a non-leader takes no lock. */
        @Bean
        @Role(BeanDefinition.ROLE_INFRASTRUCTURE)
        static OnLeaderAdvisor onLeaderAdvisor(ObjectProvider<LockClient> client, Environment environment) {
            int order = environment.getProperty("dlock.aop.order", Integer.class, DlockAopProperties.DEFAULT_ORDER);
            return new OnLeaderAdvisor(client, order == Integer.MIN_VALUE ? order : order - 1);
        }
    }

    /**
     * Makes sure an auto-proxy creator exists, as {@code @EnableCaching} does, so that the annotation
     * works even where Spring Boot's own AOP auto-configuration is switched off. Proxies classes unless
     * {@code spring.aop.proxy-target-class=false}.
     */
    static class AutoProxyRegistrar implements ImportBeanDefinitionRegistrar, EnvironmentAware {
        private Environment environment;

        @Override
        public void setEnvironment(Environment environment) {
            this.environment = environment;
        }

        @Override
        public void registerBeanDefinitions(AnnotationMetadata metadata, BeanDefinitionRegistry registry) {
            AopConfigUtils.registerAutoProxyCreatorIfNecessary(registry);
            if (environment.getProperty("spring.aop.proxy-target-class", Boolean.class, true)) {
                AopConfigUtils.forceAutoProxyCreatorToUseClassProxying(registry);
            }
        }
    }
}
