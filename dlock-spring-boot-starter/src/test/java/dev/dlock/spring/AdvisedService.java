package dev.dlock.spring;

import dev.dlock.Lease;
import java.lang.annotation.ElementType;
import java.lang.annotation.Retention;
import java.lang.annotation.RetentionPolicy;
import java.lang.annotation.Target;
import java.util.List;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.CopyOnWriteArrayList;
import java.util.concurrent.atomic.AtomicInteger;
import java.util.function.Supplier;
import org.aspectj.lang.ProceedingJoinPoint;
import org.aspectj.lang.annotation.Around;
import org.aspectj.lang.annotation.Aspect;
import org.aspectj.lang.annotation.Before;
import org.springframework.core.Ordered;
import org.springframework.core.annotation.Order;
import org.springframework.transaction.annotation.Transactional;
import org.springframework.transaction.support.TransactionSynchronizationManager;
import reactor.core.publisher.Flux;
import reactor.core.publisher.Mono;

/**
 * {@link WithLock} methods that also carry the application's own advice: an AspectJ {@code @Around}
 * ({@link Timed}), an AspectJ {@code @Before} ({@link Logged}) and {@code @Transactional}. The lock's advice
 * is outermost (the default order); the aspect runs inside it and outside the transaction.
 */
public class AdvisedService {
    /** Advised by {@link Audit#around}. */
    @Retention(RetentionPolicy.RUNTIME)
    @Target(ElementType.METHOD)
    public @interface Timed {}

    /** Advised by {@link Audit#before}. */
    @Retention(RetentionPolicy.RUNTIME)
    @Target(ElementType.METHOD)
    public @interface Logged {}

    /** The application's aspect: counts what it advised, between the lock and the transaction. */
    @Aspect
    @Order(Ordered.LOWEST_PRECEDENCE - 500)
    public static class Audit {
        final AtomicInteger arounds = new AtomicInteger();
        final AtomicInteger befores = new AtomicInteger();
        /** The fencing token of the {@link Lease} argument each {@code @Before} saw. */
        final List<Long> beforeTokens = new CopyOnWriteArrayList<>();

        /**
         * Counts and proceeds.
         *
         * @param call the advised call
         * @return what the call returned
         * @throws Throwable what the call threw
         */
        @Around("@annotation(dev.dlock.spring.AdvisedService.Timed)")
        public Object around(ProceedingJoinPoint call) throws Throwable {
            arounds.incrementAndGet();
            return call.proceed();
        }

        /**
         * Counts and records the lease argument.
         *
         * @param lease the lease the method receives
         */
        @Before("@annotation(dev.dlock.spring.AdvisedService.Logged) && args(*, lease, ..)")
        public void before(Lease lease) {
            befores.incrementAndGet();
            beforeTokens.add(lease == null ? -1 : lease.fencingToken());
        }
    }

    private final AtomicInteger calls = new AtomicInteger();
    private final List<Boolean> inTransaction = new CopyOnWriteArrayList<>();

    /** How often a method body ran (read through the proxy, which has no state). */
    public AtomicInteger calls() {
        return calls;
    }

    /** Whether a transaction was active on the thread that ran each call of {@link #future}. */
    public List<Boolean> inTransaction() {
        return inTransaction;
    }

    /**
     * A method the application times, run in a reactive transaction.
     *
     * @param id part of the key
     * @param lease the lease
     * @param body what the method returns
     * @return the body's Mono
     */
    @WithLock(key = "'adv:' + #id", waitTime = "5s")
    @Timed
    @Transactional(transactionManager = "reactiveTransactions")
    public Mono<String> timedMono(String id, Lease lease, Supplier<Mono<String>> body) {
        calls.incrementAndGet();
        return body.get();
    }

    /**
     * A method the application logs, run in a reactive transaction.
     *
     * @param id part of the key
     * @param lease the lease
     * @param body what the method returns
     * @return the body's Mono
     */
    @WithLock(key = "'adv:' + #id", waitTime = "5s")
    @Logged
    @Transactional(transactionManager = "reactiveTransactions")
    public Mono<String> loggedMono(String id, Lease lease, Supplier<Mono<String>> body) {
        calls.incrementAndGet();
        return body.get();
    }

    /**
     * A Flux the application times and logs, run in a reactive transaction.
     *
     * @param id part of the key
     * @param lease the lease
     * @param body what the method returns
     * @return the body's Flux
     */
    @WithLock(key = "'adv:' + #id", waitTime = "5s")
    @Timed
    @Logged
    @Transactional(transactionManager = "reactiveTransactions")
    public Flux<String> flux(String id, Lease lease, Supplier<Flux<String>> body) {
        calls.incrementAndGet();
        return body.get();
    }

    /**
     * A future the application times and logs, run in a transaction of the calling thread.
     *
     * @param id part of the key
     * @param lease the lease
     * @return the future
     */
    @WithLock(key = "'adv:' + #id", waitTime = "5s")
    @Timed
    @Logged
    @Transactional(transactionManager = "transactions")
    public CompletableFuture<String> future(String id, Lease lease) {
        calls.incrementAndGet();
        inTransaction.add(TransactionSynchronizationManager.isActualTransactionActive());
        return CompletableFuture.completedFuture(
                "done:" + Thread.currentThread().getName());
    }

    /**
     * A key that fails to evaluate.
     *
     * @param id null
     * @return never
     */
    @WithLock(key = "#id.length()")
    public Mono<String> badKeyMono(String id) {
        return Mono.just("unreachable");
    }

    /**
     * A key that fails to evaluate.
     *
     * @param id null
     * @return never
     */
    @WithLock(key = "#id.length()")
    public Flux<String> badKeyFlux(String id) {
        return Flux.just("unreachable");
    }

    /**
     * A key that fails to evaluate.
     *
     * @param id null
     * @return never
     */
    @WithLock(key = "#id.length()")
    public CompletableFuture<String> badKeyFuture(String id) {
        return CompletableFuture.completedFuture("unreachable");
    }
}
