package dev.dlock.spring;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;

import dev.dlock.Lease;
import dev.dlock.LockClient;
import dev.dlock.LockTimeoutException;
import java.lang.annotation.ElementType;
import java.lang.annotation.Retention;
import java.lang.annotation.RetentionPolicy;
import java.lang.annotation.Target;
import java.time.Duration;
import java.util.List;
import java.util.concurrent.Future;
import java.util.concurrent.atomic.AtomicBoolean;
import org.junit.jupiter.api.Test;
import org.springframework.aop.support.AopUtils;
import org.springframework.boot.autoconfigure.AutoConfigurations;
import org.springframework.boot.autoconfigure.aop.AopAutoConfiguration;
import org.springframework.boot.test.context.runner.ApplicationContextRunner;
import org.springframework.core.annotation.AliasFor;

/**
 * How {@link WithLock} definitions are checked and applied: mistakes fail the application's start
 * with a message naming the method; keys that evaluate to nothing fail the call without running the
 * method; the annotation works with and without Spring Boot's AOP auto-configuration, with class and
 * interface proxies, and as a meta-annotation.
 */
class AnnotationDefinitionTest {
    private final ApplicationContextRunner runner = new ApplicationContextRunner()
            .withConfiguration(AutoConfigurations.of(DlockAutoConfiguration.class))
            .withPropertyValues("dlock.uri=mem:annotation-definitions", "dlock.namespace=defs");

    private void assertStartFails(Class<?> bean, String... fragments) {
        runner.withBean(bean).run(context -> {
            assertThat(context).hasFailed();
            Throwable failure = context.getStartupFailure();
            while (failure.getCause() != null && !(failure instanceof IllegalStateException)) {
                failure = failure.getCause();
            }
            assertThat(failure).isInstanceOf(IllegalStateException.class);
            assertThat(failure.getMessage())
                    .contains("@WithLock on AnnotationDefinitionTest." + bean.getSimpleName() + ".");
            for (String fragment : fragments) {
                assertThat(failure.getMessage()).contains(fragment);
            }
        });
    }

    public static class NoKey {
        @WithLock
        public void run() {}
    }

    public static class BadExpression {
        @WithLock("'a' +")
        public void run() {}
    }

    public static class SeveralKeysNotExclusive {
        @WithLock(
                key = {"'a'", "'b'"},
                mode = LockMode.READ)
        public void run() {}
    }

    public static class BadDuration {
        @WithLock(key = "'a'", waitTime = "5 parsecs")
        public void run() {}
    }

    public static class NegativeWait {
        @WithLock(key = "'a'", waitTime = "-1s")
        public void run() {}
    }

    public static class TooShortLease {
        @WithLock(key = "'a'", leaseTime = "5ms")
        public void run() {}
    }

    public static class TooLongLease {
        @WithLock(key = "'a'", leaseTime = "366d")
        public void run() {}
    }

    public static class TooLongMinHold {
        @WithLock(key = "'a'", minHold = "400d")
        public void run() {}
    }

    public static class UnresolvedPlaceholder {
        @WithLock(key = "'a'", waitTime = "${no.such.property}")
        public void run() {}
    }

    public static class SkipOnPrimitive {
        @WithLock(key = "'a'", ifNotAcquired = NotAcquired.SKIP)
        public int run() {
            return 1;
        }
    }

    public static class FallbackWithoutName {
        @WithLock(key = "'a'", ifNotAcquired = NotAcquired.FALLBACK)
        public void run() {}
    }

    public static class NameWithoutFallback {
        @WithLock(key = "'a'", fallback = "other")
        public void run() {}

        public void other() {}
    }

    public static class MissingFallback {
        @WithLock(key = "'a'", ifNotAcquired = NotAcquired.FALLBACK, fallback = "nowhere")
        public String run(String id) {
            return id;
        }
    }

    public static class FallbackOfWrongType {
        @WithLock(key = "'a'", ifNotAcquired = NotAcquired.FALLBACK, fallback = "other")
        public String run(String id) {
            return id;
        }

        public Integer other(String id) {
            return 1;
        }
    }

    public static class UnknownVariable {
        @WithLock("'order:' + #ordrId")
        public void run(long orderId) {}
    }

    public static class UnsupportedAsyncType {
        @WithLock(key = "'a'")
        public Future<String> run() {
            return null;
        }
    }

    @Test
    void badDefinitionsFailTheStartNamingTheMethodAndTheProblem() {
        assertStartFails(NoKey.class, "no key");
        assertStartFails(BadExpression.class, "not a valid SpEL expression");
        assertStartFails(SeveralKeysNotExclusive.class, "EXCLUSIVE only", "READ");
        assertStartFails(BadDuration.class, "waitTime \"5 parsecs\" is not a duration");
        assertStartFails(NegativeWait.class, "must not be negative");
        assertStartFails(TooShortLease.class, "between 10ms and 365 days", "5ms");
        assertStartFails(TooLongLease.class, "between 10ms and 365 days", "366d");
        assertStartFails(TooLongMinHold.class, "minHold must be between 0 and 365 days", "400d");
        assertStartFails(UnresolvedPlaceholder.class, "no.such.property");
        assertStartFails(SkipOnPrimitive.class, "SKIP", "returns int");
        assertStartFails(FallbackWithoutName.class, "needs the name of the fallback method");
        assertStartFails(NameWithoutFallback.class, "fallback 'other' is set but ifNotAcquired is THROW");
        assertStartFails(MissingFallback.class, "fallback method 'nowhere' not found");
        assertStartFails(FallbackOfWrongType.class, "returns java.lang.Integer");
        assertStartFails(UnknownVariable.class, "#ordrId", "not a parameter", "orderId");
        assertStartFails(UnsupportedAsyncType.class, "java.util.concurrent.Future", "CompletableFuture");
    }

    public static class Keys {
        final AtomicBoolean called = new AtomicBoolean();

        @WithLock(key = "#name", waitTime = "0")
        public void byName(String name) {
            called.set(true);
        }

        @WithLock(key = "#names", waitTime = "0")
        public void byNames(List<String> names) {
            called.set(true);
        }

        @WithLock(key = "#names", mode = LockMode.WRITE, waitTime = "0")
        public void writeByNames(List<String> names) {
            called.set(true);
        }

        public boolean called() {
            return called.get();
        }
    }

    @Test
    void aKeyThatEvaluatesToNothingFailsTheCallWithoutRunningTheMethod() {
        runner.withBean(Keys.class).run(context -> {
            Keys keys = context.getBean(Keys.class);
            assertThatThrownBy(() -> keys.byName(null))
                    .isInstanceOf(IllegalArgumentException.class)
                    .hasMessageContaining("Keys.byName(String)")
                    .hasMessageContaining("evaluated to null");
            assertThatThrownBy(() -> keys.byNames(List.of()))
                    .isInstanceOf(IllegalArgumentException.class)
                    .hasMessageContaining("an empty collection");
            assertThatThrownBy(() -> keys.writeByNames(List.of("a", "b")))
                    .isInstanceOf(IllegalArgumentException.class)
                    .hasMessageContaining("multi-lock, but mode is WRITE");
            assertThat(keys.called()).isFalse();
            keys.byName("ann");
            assertThat(keys.called()).isTrue();
        });
    }

    /** A team's own annotation with {@code @WithLock} as meta-annotation. */
    @Target(ElementType.METHOD)
    @Retention(RetentionPolicy.RUNTIME)
    @WithLock(waitTime = "0")
    public @interface OrderLock {
        @AliasFor(annotation = WithLock.class, attribute = "key")
        String value();
    }

    /** Implemented through an interface, to test JDK proxies. */
    public interface Jobs {
        String run(String id, Lease lease);
    }

    public static class JobsImpl implements Jobs {
        @Override
        @OrderLock("'meta:' + #id")
        public String run(String id, Lease lease) {
            return lease.name();
        }
    }

    @Test
    void worksAsAMetaAnnotationThroughInterfaceProxiesAndWithoutBootsAopConfiguration() {
        runner.withConfiguration(AutoConfigurations.of(AopAutoConfiguration.class))
                .withPropertyValues("spring.aop.auto=false", "spring.aop.proxy-target-class=false")
                .withBean(JobsImpl.class)
                .run(context -> {
                    Jobs jobs = context.getBean(Jobs.class);
                    assertThat(AopUtils.isJdkDynamicProxy(jobs)).isTrue();
                    assertThat(jobs.run("7", null)).isEqualTo("meta:7");
                    LockClient client = context.getBean(LockClient.class);
                    try (Lease held = client.lock("meta:8").acquire(Duration.ofSeconds(1))) {
                        assertThatThrownBy(() -> jobs.run("8", null)).isInstanceOf(LockTimeoutException.class);
                    }
                });
    }

    @Test
    void canBeSwitchedOff() {
        runner.withPropertyValues("dlock.aop.enabled=false")
                .withBean(Keys.class)
                .run(context -> {
                    assertThat(AopUtils.isAopProxy(context.getBean(Keys.class))).isFalse();
                    assertThat(context).doesNotHaveBean(WithLockAdvisor.class);
                });
    }
}
