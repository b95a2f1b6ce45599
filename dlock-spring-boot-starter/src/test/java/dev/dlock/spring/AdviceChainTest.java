package dev.dlock.spring;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;

import dev.dlock.Lease;
import dev.dlock.LockClient;
import java.time.Duration;
import java.util.List;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.ExecutionException;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.atomic.AtomicInteger;
import org.junit.jupiter.api.AfterAll;
import org.junit.jupiter.api.BeforeAll;
import org.junit.jupiter.api.BeforeEach;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.TestInstance;
import org.springframework.boot.SpringBootConfiguration;
import org.springframework.boot.WebApplicationType;
import org.springframework.boot.autoconfigure.ImportAutoConfiguration;
import org.springframework.boot.builder.SpringApplicationBuilder;
import org.springframework.context.ConfigurableApplicationContext;
import org.springframework.context.annotation.Bean;
import org.springframework.context.annotation.EnableAspectJAutoProxy;
import org.springframework.context.annotation.Import;
import org.springframework.expression.spel.SpelEvaluationException;
import org.springframework.transaction.TransactionDefinition;
import org.springframework.transaction.annotation.EnableTransactionManagement;
import org.springframework.transaction.reactive.AbstractReactiveTransactionManager;
import org.springframework.transaction.reactive.GenericReactiveTransaction;
import org.springframework.transaction.reactive.TransactionSynchronizationManager;
import org.springframework.transaction.support.AbstractPlatformTransactionManager;
import org.springframework.transaction.support.DefaultTransactionStatus;
import reactor.core.publisher.Flux;
import reactor.core.publisher.Mono;

/**
 * {@code @WithLock} on asynchronous methods that carry the application's own advice: each subscription,
 * retry and continuation on another thread runs the whole rest of the chain (an AspectJ {@code @Around}, an
 * AspectJ {@code @Before}, {@code @Transactional}) exactly once, and a key that fails to evaluate fails what
 * the method returns.
 */
@TestInstance(TestInstance.Lifecycle.PER_CLASS)
class AdviceChainTest {
    private ConfigurableApplicationContext app;
    private AdvisedService service;
    private AdvisedService.Audit audit;
    private Transactions transactions;
    private ReactiveTransactions reactiveTransactions;
    private LockClient client;

    @SpringBootConfiguration
    @ImportAutoConfiguration(DlockAutoConfiguration.class)
    @EnableAspectJAutoProxy(proxyTargetClass = true)
    @EnableTransactionManagement
    @Import({AdvisedService.class, AdvisedService.Audit.class})
    static class App {
        @Bean
        Transactions transactions() {
            return new Transactions();
        }

        @Bean
        ReactiveTransactions reactiveTransactions() {
            return new ReactiveTransactions();
        }
    }

    /** Counts transactions; there is no resource behind them. */
    static final class Transactions extends AbstractPlatformTransactionManager {
        private static final long serialVersionUID = 1L;
        final transient AtomicInteger begun = new AtomicInteger();
        final transient AtomicInteger committed = new AtomicInteger();
        final transient AtomicInteger rolledBack = new AtomicInteger();

        @Override
        protected Object doGetTransaction() {
            return new Object();
        }

        @Override
        protected void doBegin(Object transaction, TransactionDefinition definition) {
            begun.incrementAndGet();
        }

        @Override
        protected void doCommit(DefaultTransactionStatus status) {
            committed.incrementAndGet();
        }

        @Override
        protected void doRollback(DefaultTransactionStatus status) {
            rolledBack.incrementAndGet();
        }
    }

    /** Counts reactive transactions; there is no resource behind them. */
    static final class ReactiveTransactions extends AbstractReactiveTransactionManager {
        private static final long serialVersionUID = 1L;
        final transient AtomicInteger begun = new AtomicInteger();
        final transient AtomicInteger committed = new AtomicInteger();
        final transient AtomicInteger rolledBack = new AtomicInteger();

        @Override
        protected Object doGetTransaction(TransactionSynchronizationManager synchronizations) {
            return new Object();
        }

        @Override
        protected Mono<Void> doBegin(
                TransactionSynchronizationManager synchronizations, Object transaction, TransactionDefinition d) {
            return Mono.fromRunnable(begun::incrementAndGet);
        }

        @Override
        protected Mono<Void> doCommit(
                TransactionSynchronizationManager synchronizations, GenericReactiveTransaction status) {
            return Mono.fromRunnable(committed::incrementAndGet);
        }

        @Override
        protected Mono<Void> doRollback(
                TransactionSynchronizationManager synchronizations, GenericReactiveTransaction status) {
            return Mono.fromRunnable(rolledBack::incrementAndGet);
        }
    }

    @BeforeAll
    void start() {
        app = new SpringApplicationBuilder(App.class)
                .web(WebApplicationType.NONE)
                .properties("dlock.uri=mem:advice-" + System.nanoTime(), "spring.main.banner-mode=off")
                .run();
        service = app.getBean(AdvisedService.class);
        audit = app.getBean(AdvisedService.Audit.class);
        transactions = app.getBean(Transactions.class);
        reactiveTransactions = app.getBean(ReactiveTransactions.class);
        client = app.getBean(LockClient.class);
    }

    @AfterAll
    void stop() {
        app.close();
    }

    @BeforeEach
    void reset() {
        service.calls().set(0);
        service.inTransaction().clear();
        audit.arounds.set(0);
        audit.befores.set(0);
        audit.beforeTokens.clear();
        for (AtomicInteger counter : List.of(
                transactions.begun,
                transactions.committed,
                transactions.rolledBack,
                reactiveTransactions.begun,
                reactiveTransactions.committed,
                reactiveTransactions.rolledBack)) {
            counter.set(0);
        }
    }

    @Test
    void aRetriedMonoRunsTheAroundAdviceAndTheTransactionOnEveryAttempt() {
        AtomicInteger attempts = new AtomicInteger();
        String result = service.timedMono(
                        "retry",
                        null,
                        () -> attempts.incrementAndGet() < 3
                                ? Mono.error(new IllegalStateException("attempt " + attempts.get()))
                                : Mono.just("ok"))
                .retry(2)
                .block(Duration.ofSeconds(10));

        assertThat(result).isEqualTo("ok");
        assertThat(service.calls()).hasValue(3);
        assertThat(audit.arounds).hasValue(3);
        assertThat(reactiveTransactions.begun).hasValue(3);
        assertThat(reactiveTransactions.rolledBack).hasValue(2);
        assertThat(reactiveTransactions.committed).hasValue(1);
    }

    @Test
    void aMonoSubscribedAfterTheCallRunsTheBeforeAdviceWithEachSubscriptionsLease() {
        Mono<String> mono = service.loggedMono("twice", null, () -> Mono.just("ok"));

        assertThat(mono.block(Duration.ofSeconds(10))).isEqualTo("ok");
        assertThat(mono.block(Duration.ofSeconds(10))).isEqualTo("ok");

        assertThat(service.calls()).hasValue(2);
        assertThat(audit.befores).hasValue(2);
        assertThat(audit.beforeTokens).hasSize(2).doesNotContain(-1L);
        assertThat(audit.beforeTokens.get(1)).isGreaterThan(audit.beforeTokens.get(0));
        assertThat(reactiveTransactions.begun).hasValue(2);
        assertThat(reactiveTransactions.committed).hasValue(2);
    }

    @Test
    void aRetriedFluxRunsEveryAdviceOnEveryAttempt() {
        AtomicInteger attempts = new AtomicInteger();
        List<String> items = service.flux(
                        "flux",
                        null,
                        () -> attempts.incrementAndGet() < 2
                                ? Flux.just("a").concatWith(Flux.error(new IllegalStateException("cut")))
                                : Flux.just("a", "b"))
                .retry(1)
                .collectList()
                .block(Duration.ofSeconds(10));

        assertThat(items).containsExactly("a", "a", "b");
        assertThat(service.calls()).hasValue(2);
        assertThat(audit.arounds).hasValue(2);
        assertThat(audit.befores).hasValue(2);
        assertThat(reactiveTransactions.begun).hasValue(2);
        assertThat(reactiveTransactions.rolledBack).hasValue(1);
        assertThat(reactiveTransactions.committed).hasValue(1);
    }

    @Test
    void aFutureThatWaitedRunsEveryAdviceOnTheThreadThatGotTheLock() throws Exception {
        CompletableFuture<String> result;
        try (Lease held = client.lock("adv:future").acquire(Duration.ofSeconds(5))) {
            result = service.future("future", null);
            assertThat(result).isNotDone();
        }
        String value = result.get(10, TimeUnit.SECONDS);

        assertThat(value).doesNotEndWith(":" + Thread.currentThread().getName());
        assertThat(service.calls()).hasValue(1);
        assertThat(audit.arounds).hasValue(1);
        assertThat(audit.befores).hasValue(1);
        assertThat(audit.beforeTokens).doesNotContain(-1L);
        assertThat(service.inTransaction()).containsExactly(true);
        assertThat(transactions.committed).hasValue(1);
    }

    @Test
    void aKeyThatFailsToEvaluateFailsWhatAnAsynchronousMethodReturns() {
        Mono<String> mono = service.badKeyMono(null);
        assertThatThrownBy(() -> mono.block(Duration.ofSeconds(5))).isInstanceOf(SpelEvaluationException.class);

        Flux<String> flux = service.badKeyFlux(null);
        assertThatThrownBy(() -> flux.blockFirst(Duration.ofSeconds(5))).isInstanceOf(SpelEvaluationException.class);

        CompletableFuture<String> future = service.badKeyFuture(null);
        assertThatThrownBy(() -> future.get(5, TimeUnit.SECONDS))
                .isInstanceOf(ExecutionException.class)
                .hasCauseInstanceOf(SpelEvaluationException.class);
    }
}
