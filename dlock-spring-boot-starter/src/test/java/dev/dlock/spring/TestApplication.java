package dev.dlock.spring;

import dev.dlock.tck.FreezableBackend;
import java.util.concurrent.atomic.AtomicReference;
import org.apache.curator.framework.CuratorFramework;
import org.apache.curator.framework.CuratorFrameworkFactory;
import org.apache.curator.retry.RetryOneTime;
import org.springframework.boot.SpringBootConfiguration;
import org.springframework.boot.autoconfigure.EnableAutoConfiguration;
import org.springframework.boot.autoconfigure.condition.ConditionalOnBooleanProperty;
import org.springframework.boot.autoconfigure.condition.ConditionalOnProperty;
import org.springframework.context.annotation.Bean;
import org.springframework.context.annotation.Configuration;
import org.springframework.context.annotation.Import;

/** The application the starter tests run: full auto-configuration plus the annotated services. */
@SpringBootConfiguration
@EnableAutoConfiguration
@Import({
    LockedService.class,
    AsyncLockedService.class,
    ReactiveLockedService.class,
    TestApplication.Freezing.class,
    TestApplication.ZooKeeperClient.class
})
public class TestApplication {
    /** Used by a key expression: {@code @lockKeys.suffix()}. */
    @Bean
    LockKeys lockKeys() {
        return new LockKeys();
    }

    /** A bean that key expressions refer to. */
    public static class LockKeys {
        /**
         * A fixed suffix.
         *
         * @return the suffix
         */
        public String suffix() {
            return "v1";
        }
    }

    /**
     * With {@code test.freezable=true}: wraps the store in a {@link FreezableBackend} so that a test can cut
     * this instance off from the store; with {@code test.frozen-at-start=true} it is cut off from the start.
     */
    @Configuration(proxyBeanMethods = false)
    @ConditionalOnBooleanProperty("test.freezable")
    static class Freezing {
        @Bean
        Freezer freezer() {
            return new Freezer();
        }

        @Bean
        LockClientBuilderCustomizer freezableStore(
                Freezer freezer, org.springframework.core.env.Environment environment) {
            boolean frozen = environment.getProperty("test.frozen-at-start", Boolean.class, false);
            return builder -> builder.backend(builder.backend().andThen(backend -> {
                FreezableBackend freezable = new FreezableBackend(backend);
                if (frozen) {
                    freezable.freeze();
                }
                freezer.backend.set(freezable);
                return freezable;
            }));
        }
    }

    /** With {@code test.zookeeper.connect}: the application's own Curator client, as many applications have. */
    @Configuration(proxyBeanMethods = false)
    @ConditionalOnProperty("test.zookeeper.connect")
    static class ZooKeeperClient {
        @Bean(initMethod = "start", destroyMethod = "close")
        CuratorFramework curator(org.springframework.core.env.Environment environment) {
            return CuratorFrameworkFactory.newClient(
                    environment.getRequiredProperty("test.zookeeper.connect"), new RetryOneTime(100));
        }
    }

    /** Cuts the application's client off from the store. */
    static class Freezer {
        final AtomicReference<FreezableBackend> backend = new AtomicReference<>();

        void freeze() {
            backend.get().freeze();
        }
    }
}
