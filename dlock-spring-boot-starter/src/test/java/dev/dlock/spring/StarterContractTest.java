package dev.dlock.spring;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;
import static org.awaitility.Awaitility.await;

import com.jayway.jsonpath.JsonPath;
import dev.dlock.Lease;
import dev.dlock.LeaseLostException;
import dev.dlock.LockBackendException;
import dev.dlock.LockClient;
import dev.dlock.LockInfo;
import dev.dlock.LockKind;
import dev.dlock.LockRejectedException;
import dev.dlock.LockTimeoutException;
import io.micrometer.core.instrument.MeterRegistry;
import java.net.URI;
import java.net.http.HttpClient;
import java.net.http.HttpRequest;
import java.net.http.HttpResponse;
import java.time.Duration;
import java.util.ArrayList;
import java.util.HashMap;
import java.util.List;
import java.util.Map;
import java.util.Optional;
import java.util.concurrent.Callable;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.CountDownLatch;
import java.util.concurrent.ExecutionException;
import java.util.concurrent.ExecutorService;
import java.util.concurrent.Executors;
import java.util.concurrent.Future;
import java.util.concurrent.ThreadLocalRandom;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.atomic.AtomicBoolean;
import java.util.concurrent.atomic.AtomicLong;
import java.util.concurrent.atomic.AtomicReference;
import org.junit.jupiter.api.AfterAll;
import org.junit.jupiter.api.BeforeAll;
import org.junit.jupiter.api.MethodOrderer;
import org.junit.jupiter.api.Order;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.TestInstance;
import org.junit.jupiter.api.TestMethodOrder;
import org.junit.jupiter.api.extension.ExtendWith;
import org.springframework.boot.WebApplicationType;
import org.springframework.boot.builder.SpringApplicationBuilder;
import org.springframework.boot.health.contributor.HealthIndicator;
import org.springframework.boot.health.contributor.Status;
import org.springframework.boot.test.system.CapturedOutput;
import org.springframework.boot.test.system.OutputCaptureExtension;
import org.springframework.context.ConfigurableApplicationContext;
import reactor.core.Disposable;
import reactor.core.publisher.Flux;
import reactor.core.publisher.Mono;
import reactor.core.publisher.Sinks;

/**
 * What the starter must do, whatever the store: one real Spring Boot application (web server, actuator,
 * Micrometer, the annotated services of {@link TestApplication}) per store, plus short-lived ones for
 * failures. A subclass says how to reach its store.
 *
 * <p>"Another instance" is played by a second {@link LockClient} on the same store and namespace: it holds
 * locks the application must wait for, and reads the store's view of the application's locks.
 */
@TestInstance(TestInstance.Lifecycle.PER_CLASS)
@TestMethodOrder(MethodOrderer.OrderAnnotation.class)
@ExtendWith(OutputCaptureExtension.class)
abstract class StarterContractTest {
    private static final AtomicLong IDS =
            new AtomicLong(ThreadLocalRandom.current().nextLong(1, 1L << 40));

    private final String namespace = "starter-" + Long.toHexString(System.nanoTime());
    private final ExecutorService threads = Executors.newCachedThreadPool();
    private ConfigurableApplicationContext app;
    private ConfigurableApplicationContext fragile;
    private LockClient peer;
    private LockedService service;
    private AsyncLockedService async;
    private ReactiveLockedService reactive;
    private MeterRegistry meters;
    private HttpClient http;
    private String baseUrl;

    /** Properties that connect the application to the store (usually {@code dlock.uri}). */
    abstract Map<String, Object> storeProperties();

    /** A URI of the same store for the peer client. */
    abstract String peerUri();

    /** Properties that point the application at this kind of store while it is down. */
    abstract Map<String, Object> downStoreProperties();

    /** Text that the startup failure message must contain to name the store that is down. */
    abstract String downStoreText();

    /** Called before the application starts, after {@link #storeProperties()} can be computed. */
    void startStore() throws Exception {}

    /** Called after everything else was closed. */
    void stopStore() throws Exception {}

    @BeforeAll
    void startApplication() throws Exception {
        startStore();
        Map<String, Object> properties = new HashMap<>(storeProperties());
        properties.put("server.port", "0");
        properties.put("management.endpoints.web.exposure.include", "health,dlock");
        properties.put("management.endpoint.health.show-details", "always");
        properties.put("dlock.namespace", namespace);
        properties.put("dlock.lease-time", "10s");
        properties.put("dlock.operation-timeout", "2s");
        properties.put("dlock.metrics.name-patterns", "order:*,counter:*");
        app = start(WebApplicationType.SERVLET, properties);
        peer = LockClient.builder(peerUri()).namespace(namespace).build();
        service = app.getBean(LockedService.class);
        async = app.getBean(AsyncLockedService.class);
        reactive = app.getBean(ReactiveLockedService.class);
        meters = app.getBean(MeterRegistry.class);
        http = HttpClient.newHttpClient();
        baseUrl = "http://127.0.0.1:" + app.getEnvironment().getProperty("local.server.port");
    }

    @AfterAll
    void stopApplication() throws Exception {
        threads.shutdownNow();
        if (peer != null) {
            peer.close();
        }
        if (fragile != null) {
            fragile.close();
        }
        if (app != null) {
            app.close();
        }
        stopStore();
    }

    /** The application all cases share. */
    ConfigurableApplicationContext app() {
        return app;
    }

    /**
     * Spring Boot's auto-configurations of the stores this suite does not use: the test class path has
     * them all, and a real application would have only its own.
     */
    List<String> unusedStoreAutoConfigurations() {
        return List.of(REDIS_AUTO_CONFIGURATION, JDBC_AUTO_CONFIGURATION);
    }

    static final String REDIS_AUTO_CONFIGURATION =
            "org.springframework.boot.data.redis.autoconfigure.DataRedisAutoConfiguration";
    static final String JDBC_AUTO_CONFIGURATION =
            "org.springframework.boot.jdbc.autoconfigure.DataSourceAutoConfiguration";

    ConfigurableApplicationContext start(WebApplicationType type, Map<String, Object> properties) {
        Map<String, Object> all = new HashMap<>(properties);
        all.put("spring.main.banner-mode", "off");
        all.put("spring.autoconfigure.exclude", String.join(",", unusedStoreAutoConfigurations()));
        return new SpringApplicationBuilder(TestApplication.class)
                .web(type)
                .properties(all)
                .run();
    }

    private static long id() {
        return IDS.incrementAndGet();
    }

    /** Runs on another thread and returns its result, rethrowing what it threw. */
    private <T> T onOtherThread(Callable<T> call) throws Exception {
        Future<T> result = threads.submit(call);
        try {
            return result.get(30, TimeUnit.SECONDS);
        } catch (ExecutionException e) {
            if (e.getCause() instanceof Exception cause) {
                throw cause;
            }
            throw e;
        }
    }

    private static Throwable cause(CompletableFuture<?> future) {
        try {
            future.get(30, TimeUnit.SECONDS);
        } catch (ExecutionException e) {
            return e.getCause();
        } catch (Exception e) {
            throw new AssertionError("the future did not fail: " + e, e);
        }
        throw new AssertionError("the future completed normally");
    }

    private List<LockInfo.Holder> holders(String name) {
        return peer.describe(name).stream()
                .flatMap(info -> info.holders().stream())
                .toList();
    }

    // ---- the annotation on synchronous methods

    @Test
    void concurrentCallsAreSerialised() throws Exception {
        String name = "n" + id();
        int threadCount = 4;
        int callsEach = 25;
        int before = service.counter();
        List<Future<?>> done = new ArrayList<>();
        CountDownLatch go = new CountDownLatch(1);
        for (int t = 0; t < threadCount; t++) {
            done.add(threads.submit(() -> {
                go.await();
                for (int i = 0; i < callsEach; i++) {
                    service.increment(name);
                }
                return null;
            }));
        }
        go.countDown();
        for (Future<?> f : done) {
            f.get(60, TimeUnit.SECONDS);
        }
        assertThat(service.counter() - before).isEqualTo(threadCount * callsEach);
        assertThat(service.maxInside()).isEqualTo(1);
        // A caller handed the hold by another thread while its own store attempt was on its way has that
        // attempt granted a moment later, and given back at once (CohortTest); a hold left behind would
        // stay for the 10 s lease, or for good if renewed.
        await().atMost(Duration.ofSeconds(5))
                .until(() -> holders("counter:" + name).isEmpty());
    }

    @Test
    void theKeyIsASpelExpressionOverTheArguments() throws Exception {
        long a = id();
        long b = id();
        String result = service.ship(a, () -> {
            assertThat(holders("order:" + a)).hasSize(1);
            assertThat(holders("order:" + b)).isEmpty();
            try {
                assertThat(onOtherThread(() -> service.ship(b, () -> "b"))).isEqualTo("b");
                assertThatThrownBy(() -> onOtherThread(() -> service.ship(a, () -> "a again")))
                        .isInstanceOf(LockTimeoutException.class)
                        .hasMessageContaining("order:" + a);
            } catch (Exception e) {
                throw new AssertionError(e);
            }
            return "a";
        });
        assertThat(result).isEqualTo("a");
        assertThat(holders("order:" + a)).isEmpty();
    }

    @Test
    void keysSeeTheRootObjectPositionalParametersAndBeans() {
        assertThat(service.rootAndBean("x" + id(), null)).matches("rootAndBean:x\\d+:v1");
    }

    @Test
    void severalKeysTakeAMultiLockAllOrNothing() throws Exception {
        String from = "f" + id();
        String to = "t" + id();
        assertThat(service.transfer(to, from, null)).containsExactly("acct:" + from, "acct:" + to);
        try (Lease held = peer.lock("acct:" + to).acquire(Duration.ofSeconds(5))) {
            assertThatThrownBy(() -> service.transfer(from, to, null)).isInstanceOf(LockTimeoutException.class);
            // The parts taken before the failure are released right after it, asynchronously.
            await().atMost(Duration.ofSeconds(5))
                    .until(() -> holders("acct:" + from).isEmpty());
        }
    }

    @Test
    void aCollectionValuedKeyTakesAMultiLock() {
        int base = (int) (id() % 1_000_000);
        assertThat(service.lockAll(List.of(base + 2, base, base + 1), null))
                .containsExactly("item:" + base, "item:" + (base + 1), "item:" + (base + 2));
    }

    @Test
    void byDefaultABusyLockThrowsAndTheMethodIsNotCalled() {
        long order = id();
        AtomicBoolean called = new AtomicBoolean();
        try (Lease held = peer.lock("order:" + order).acquire(Duration.ofSeconds(5))) {
            assertThatThrownBy(() -> service.ship(order, () -> {
                        called.set(true);
                        return "shipped";
                    }))
                    .isInstanceOf(LockTimeoutException.class);
        }
        assertThat(called).isFalse();
    }

    @Test
    void skipReturnsNothingWithoutCallingTheMethod() {
        long order = id();
        AtomicBoolean called = new AtomicBoolean();
        try (Lease held = peer.lock("order:" + order).acquire(Duration.ofSeconds(5))) {
            assertThat(service.shipOrSkip(order, () -> {
                        called.set(true);
                        return "shipped";
                    }))
                    .isNull();
            assertThat(service.shipOptionalOrSkip(order, () -> {
                        called.set(true);
                        return "shipped";
                    }))
                    .isEmpty();
            service.touchOrSkip(order, () -> called.set(true));
        }
        assertThat(called).isFalse();
        assertThat(service.shipOptionalOrSkip(order, () -> "shipped")).contains("shipped");
    }

    @Test
    void aJobWithAMinimumHoldIsNotRunAgainBeforeItsTimeIsUp() throws Exception {
        long job = id();
        long start = System.nanoTime();
        assertThat(service.runJobOrSkip(job, () -> "ran")).isEqualTo("ran");
        assertThat(service.runJobOrSkip(job, () -> "ran again"))
                .as("skipped: the lock is held for its minimum time after the job returned")
                .isNull();
        assertThat(peer.lock("job:" + job).tryAcquire())
                .as("held for other clients too")
                .isEmpty();
        try (Lease next = peer.lock("job:" + job).acquire(Duration.ofSeconds(10))) {
            assertThat(TimeUnit.NANOSECONDS.toMillis(System.nanoTime() - start))
                    .as("released once 2 s had passed since the grant")
                    .isGreaterThanOrEqualTo(2_000);
        }
    }

    @Test
    void fallbackIsCalledWithTheArgumentsAndTheCause() {
        long order = id();
        AtomicBoolean called = new AtomicBoolean();
        try (Lease held = peer.lock("order:" + order).acquire(Duration.ofSeconds(5))) {
            assertThat(service.shipOrFallback(order, () -> {
                        called.set(true);
                        return "shipped";
                    }))
                    .isEqualTo("busy:" + order + ":LockTimeoutException");
        }
        assertThat(called).isFalse();
        assertThat(service.shipOrFallback(order, () -> "shipped")).isEqualTo("shipped");
    }

    @Test
    void theCallWaitsUpToItsWaitTime() throws Exception {
        long order = id();
        Lease held = peer.lock("order:" + order).acquire(Duration.ofSeconds(5));
        CompletableFuture.delayedExecutor(100, TimeUnit.MILLISECONDS).execute(held::close);
        assertThat(service.shipWaiting(order, () -> "shipped")).isEqualTo("shipped");
    }

    @Test
    void aLeaseParameterReceivesTheLeaseWithItsFencingToken() {
        long order = id();
        AtomicLong seen = new AtomicLong();
        long first = service.tokenWhile(
                order, null, () -> seen.set(holders("order:" + order).get(0).fencingToken()));
        assertThat(first).isEqualTo(seen.get());
        assertThat(service.token(order, null)).isGreaterThan(first);
    }

    @Test
    void nestedCallsWithTheSameKeyOnOneThreadAreReentrant() {
        assertThat(service.outer("r" + id())).isEqualTo("outer>inner");
    }

    @Test
    void readersShareAndWritersExclude() throws Exception {
        String doc = "d" + id();
        service.read(doc, () -> {
            try {
                assertThat(onOtherThread(() -> service.read(doc, () -> "second reader")))
                        .isEqualTo("second reader");
                assertThatThrownBy(() -> onOtherThread(() -> service.write(doc, () -> "writer")))
                        .isInstanceOf(LockTimeoutException.class);
            } catch (Exception e) {
                throw new AssertionError(e);
            }
            return null;
        });
        service.write(doc, () -> {
            try {
                assertThatThrownBy(() -> onOtherThread(() -> service.read(doc, () -> "reader")))
                        .isInstanceOf(LockTimeoutException.class);
            } catch (Exception e) {
                throw new AssertionError(e);
            }
            return null;
        });
    }

    @Test
    void fairModeTakesTheFairLock() {
        String id = "q" + id();
        String kind =
                service.fair(id, () -> peer.describe("fair:" + id).get(0).kind().tag());
        assertThat(kind).isEqualTo(LockKind.FAIR.tag());
    }

    @Test
    void leaseTimeComesFromTheAnnotationWithPlaceholders() {
        Duration remaining = service.remaining("l" + id(), null);
        assertThat(remaining).isLessThanOrEqualTo(Duration.ofSeconds(2)).isGreaterThan(Duration.ofMillis(1500));
    }

    @Test
    void propertiesAreBound() {
        DlockProperties properties = app.getBean(DlockProperties.class);
        assertThat(properties.getNamespace()).isEqualTo(namespace);
        assertThat(properties.getLeaseTime()).isEqualTo(Duration.ofSeconds(10));
        assertThat(properties.getMetrics().getNamePatterns()).containsExactly("order:*", "counter:*");
        LockClient client = app.getBean(LockClient.class);
        String name = "p" + id();
        try (Lease lease = client.lock(name).acquire(Duration.ofSeconds(5))) {
            assertThat(lease.remaining())
                    .isLessThanOrEqualTo(Duration.ofSeconds(10))
                    .isGreaterThan(Duration.ofSeconds(8));
            assertThat(holders(name)).as("seen in the configured namespace").hasSize(1);
            try (LockClient otherNamespace = LockClient.builder(peerUri())
                    .namespace(namespace + "-other")
                    .build()) {
                assertThat(otherNamespace.describe(name)).isEmpty();
            }
        }
    }

    // ---- CompletableFuture methods

    @Test
    void aFutureMethodDoesNotBlockItsCallerWhileWaiting() {
        String id = "j" + id();
        AtomicReference<Thread> ranOn = new AtomicReference<>();
        CompletableFuture<String> result;
        try (Lease held = peer.lock("job:" + id).acquire(Duration.ofSeconds(5))) {
            result = async.run(id, null, lease -> {
                ranOn.set(Thread.currentThread());
                return CompletableFuture.completedFuture("ran");
            });
            assertThat(result).as("returned while the lock was busy").isNotDone();
            assertThat(ranOn.get()).isNull();
        }
        assertThat(result).succeedsWithin(Duration.ofSeconds(10)).isEqualTo("ran");
        assertThat(ranOn.get()).isNotSameAs(Thread.currentThread());
    }

    @Test
    void aFutureMethodHoldsTheLockUntilItsFutureCompletes() {
        String id = "j" + id();
        CompletableFuture<String> gate = new CompletableFuture<>();
        AtomicLong token = new AtomicLong();
        CompletableFuture<String> result = async.run(id, null, lease -> {
            token.set(lease.fencingToken());
            return gate;
        });
        await().atMost(Duration.ofSeconds(10)).until(() -> token.get() != 0);
        assertThat(holders("job:" + id)).singleElement().satisfies(h -> assertThat(h.fencingToken())
                .isEqualTo(token.get()));
        assertThat(result).isNotDone();
        gate.complete("done");
        assertThat(result).succeedsWithin(Duration.ofSeconds(10)).isEqualTo("done");
        assertThat(holders("job:" + id))
                .as("released before the result completed")
                .isEmpty();
    }

    @Test
    void concurrentFutureCallsAreSerialised() {
        String name = "a" + id();
        int before = async.counter();
        List<CompletableFuture<Integer>> all = new ArrayList<>();
        for (int i = 0; i < 100; i++) {
            all.add(async.increment(name));
        }
        CompletableFuture.allOf(all.toArray(CompletableFuture[]::new)).join();
        assertThat(async.counter() - before).isEqualTo(100);
        assertThat(async.maxInside()).isEqualTo(1);
    }

    @Test
    void futureMethodsApplyEachPolicy() {
        String id = "j" + id();
        AtomicBoolean called = new AtomicBoolean();
        try (Lease held = peer.lock("job:" + id).acquire(Duration.ofSeconds(5))) {
            assertThat(cause(async.runOrThrow(id, null, lease -> {
                                called.set(true);
                                return CompletableFuture.completedFuture("ran");
                            })
                            .toCompletableFuture()))
                    .isInstanceOf(LockTimeoutException.class);
            assertThat(async.runOrSkip(id, null, lease -> {
                        called.set(true);
                        return CompletableFuture.completedFuture("ran");
                    }))
                    .succeedsWithin(Duration.ofSeconds(10))
                    .isNull();
            assertThat(async.runOrFallback(id, null, lease -> {
                        called.set(true);
                        return CompletableFuture.completedFuture("ran");
                    }))
                    .succeedsWithin(Duration.ofSeconds(10))
                    .isEqualTo("busy:" + id + ":true:LockTimeoutException");
        }
        assertThat(called).isFalse();
    }

    @Test
    void aFailingFutureMethodReleasesTheLockAndPassesTheFailureOn() {
        String id = "j" + id();
        CompletableFuture<String> result =
                async.run(id, null, lease -> CompletableFuture.failedFuture(new IllegalStateException("boom")));
        assertThat(cause(result)).isInstanceOf(IllegalStateException.class).hasMessage("boom");
        assertThat(holders("job:" + id)).isEmpty();
    }

    // ---- Reactor methods

    @Test
    void aMonoTakesTheLockWhenSubscribedAndReleasesItWhenDone() {
        String id = "m" + id();
        AtomicLong token = new AtomicLong();
        Mono<String> mono = reactive.mono(
                id,
                null,
                lease -> Mono.fromCallable(() -> {
                    token.set(lease.fencingToken());
                    return "value:" + holders("rx:" + id).size();
                }));
        assertThat(holders("rx:" + id))
                .as("nothing happens before subscription")
                .isEmpty();
        assertThat(mono.block(Duration.ofSeconds(10))).isEqualTo("value:1");
        assertThat(token.get()).isPositive();
        assertThat(holders("rx:" + id)).isEmpty();
        assertThat(mono.block(Duration.ofSeconds(10)))
                .as("each subscription locks anew")
                .isEqualTo("value:1");
    }

    @Test
    void aFluxHoldsTheLockUntilItCompletes() {
        String id = "f" + id();
        Sinks.Many<String> sink = Sinks.many().unicast().onBackpressureBuffer();
        List<String> received = new ArrayList<>();
        AtomicBoolean completed = new AtomicBoolean();
        Disposable subscription = reactive.flux(id, null, lease -> sink.asFlux())
                .subscribe(received::add, error -> {}, () -> completed.set(true));
        await().atMost(Duration.ofSeconds(10)).until(() -> holders("rx:" + id).size() == 1);
        sink.tryEmitNext("a");
        sink.tryEmitNext("b");
        assertThat(holders("rx:" + id)).hasSize(1);
        sink.tryEmitComplete();
        await().atMost(Duration.ofSeconds(10)).untilTrue(completed);
        assertThat(received).containsExactly("a", "b");
        assertThat(holders("rx:" + id)).isEmpty();
        assertThat(subscription.isDisposed()).isTrue();
    }

    @Test
    void cancellingAFluxReleasesTheLock() {
        String id = "f" + id();
        Disposable subscription =
                reactive.flux(id, null, lease -> Flux.<String>never()).subscribe();
        await().atMost(Duration.ofSeconds(10)).until(() -> holders("rx:" + id).size() == 1);
        subscription.dispose();
        await().atMost(Duration.ofSeconds(10)).until(() -> holders("rx:" + id).isEmpty());
    }

    @Test
    void cancellingWhileWaitingLeavesNoHolder() throws Exception {
        String id = "m" + id();
        AtomicBoolean called = new AtomicBoolean();
        Disposable subscription;
        try (Lease held = peer.lock("rx:" + id).acquire(Duration.ofSeconds(5))) {
            subscription = reactive.mono(id, null, lease -> {
                        called.set(true);
                        return Mono.just("x");
                    })
                    .subscribe();
            Thread.sleep(100);
            subscription.dispose();
        }
        Thread.sleep(300);
        assertThat(called).isFalse();
        assertThat(holders("rx:" + id)).isEmpty();
    }

    @Test
    void reactiveMethodsApplyEachPolicy() {
        String id = "m" + id();
        AtomicBoolean called = new AtomicBoolean();
        try (Lease held = peer.lock("rx:" + id).acquire(Duration.ofSeconds(5))) {
            assertThatThrownBy(() -> reactive.monoOrThrow(id, null, lease -> {
                                called.set(true);
                                return Mono.just("x");
                            })
                            .block(Duration.ofSeconds(10)))
                    .isInstanceOf(LockTimeoutException.class);
            assertThat(reactive.fluxOrSkip(id, null, lease -> {
                                called.set(true);
                                return Flux.just("x");
                            })
                            .collectList()
                            .block(Duration.ofSeconds(10)))
                    .isEmpty();
            assertThat(reactive.monoOrFallback(id, null, lease -> {
                                called.set(true);
                                return Mono.just("x");
                            })
                            .block(Duration.ofSeconds(10)))
                    .isEqualTo("busy:" + id + ":LockTimeoutException");
        }
        assertThat(called).isFalse();
    }

    // ---- metrics

    @Test
    void metricsAreRecordedTaggedByNamePattern() {
        long order = id();
        long acquired = timerCount("dlock.acquire", "order:*", "granted");
        long timedOut = timerCount("dlock.acquire", "order:*", "timeout");
        long held = meters.get("dlock.held").tag("name", "order:*").timer().count();
        long otherAcquired = timerCount("dlock.acquire", "other", "granted");
        AtomicReference<Double> activeInside = new AtomicReference<>();
        service.ship(order, () -> {
            activeInside.set(activeLeases("order:*"));
            return "shipped";
        });
        assertThat(activeInside.get()).isEqualTo(1.0);
        assertThat(activeLeases("order:*")).isZero();
        try (Lease busy = peer.lock("order:" + order).acquire(Duration.ofSeconds(5))) {
            assertThatThrownBy(() -> service.ship(order, () -> "no")).isInstanceOf(LockTimeoutException.class);
        }
        service.rootAndBean("m" + order, null);
        // events reach the meters on the client's listener thread
        await().atMost(Duration.ofSeconds(10)).untilAsserted(() -> {
            assertThat(timerCount("dlock.acquire", "order:*", "granted")).isEqualTo(acquired + 1);
            assertThat(timerCount("dlock.acquire", "order:*", "timeout")).isEqualTo(timedOut + 1);
            assertThat(meters.get("dlock.held").tag("name", "order:*").timer().count())
                    .isEqualTo(held + 1);
            assertThat(timerCount("dlock.acquire", "other", "granted")).isEqualTo(otherAcquired + 1);
        });
        assertThat(meters.find("dlock.acquire").tag("name", "order:" + order).timers())
                .as("names are never tags")
                .isEmpty();
    }

    private long timerCount(String name, String pattern, String outcome) {
        return meters.get(name)
                .tag("name", pattern)
                .tag("outcome", outcome)
                .timer()
                .count();
    }

    private double activeLeases(String pattern) {
        return meters.get("dlock.leases.active").tag("name", pattern).gauge().value();
    }

    // ---- actuator

    @Test
    void actuatorReportsHealthAndTheHeldLeases() throws Exception {
        String health = get("/actuator/health");
        assertThat((String) JsonPath.read(health, "$.components.dlock.status")).isEqualTo("UP");
        assertThat((String) JsonPath.read(health, "$.components.dlock.details.store"))
                .isNotBlank();
        long order = id();
        String[] seen = new String[2];
        long token = service.tokenWhile(order, null, () -> {
            try {
                seen[0] = get("/actuator/dlock");
                seen[1] = get("/actuator/dlock/order:" + order);
            } catch (Exception e) {
                throw new AssertionError(e);
            }
        });
        List<Map<String, Object>> leases = JsonPath.read(seen[0], "$.leases[?(@.name == 'order:" + order + "')]");
        assertThat(leases).singleElement().satisfies(lease -> {
            assertThat(((Number) lease.get("token")).longValue()).isEqualTo(token);
            assertThat(Duration.parse((String) lease.get("heldFor"))).isGreaterThanOrEqualTo(Duration.ZERO);
            assertThat(Duration.parse((String) lease.get("expiresIn")))
                    .isPositive()
                    .isLessThanOrEqualTo(Duration.ofSeconds(10));
        });
        assertThat((String) JsonPath.read(seen[1], "$[0].kind")).isEqualTo("lock");
        assertThat(((Number) JsonPath.read(seen[1], "$[0].holders[0].token")).longValue())
                .isEqualTo(token);
        assertThat((String) JsonPath.read(seen[1], "$[0].heldBack"))
                .as("no hold-back")
                .isEqualTo("PT0S");
        assertThat((List<?>) JsonPath.read(get("/actuator/dlock/order:" + order), "$"))
                .isEmpty();
    }

    private String get(String path) throws Exception {
        HttpResponse<String> response = http.send(
                HttpRequest.newBuilder(URI.create(baseUrl + path)).GET().build(), HttpResponse.BodyHandlers.ofString());
        assertThat(response.statusCode()).as(path + " -> " + response.body()).isEqualTo(200);
        return response.body();
    }

    // ---- failures, each in an application of its own

    @Test
    void startupFailsWithAMessageNamingTheStoreWhenItIsDown(CapturedOutput output) {
        Map<String, Object> properties = new HashMap<>(downStoreProperties());
        properties.put("dlock.operation-timeout", "500ms");
        long started = System.nanoTime();
        assertThatThrownBy(() -> start(WebApplicationType.NONE, properties))
                .hasRootCauseInstanceOf(Exception.class)
                .satisfies(e -> {
                    Throwable t = e;
                    while (t != null && !(t instanceof LockBackendException)) {
                        t = t.getCause();
                    }
                    assertThat(t).as("a LockBackendException in the chain").isNotNull();
                    assertThat(t.getMessage()).contains(downStoreText());
                });
        assertThat(Duration.ofNanos(System.nanoTime() - started)).isLessThan(Duration.ofSeconds(30));
        assertThat(output.getOut() + output.getErr())
                .contains("APPLICATION FAILED TO START")
                .contains(downStoreText())
                .contains("dlock.startup-check=false");
    }

    /**
     * One more application for the two cases that break things, with a local queue limit of 1, a short
     * lease time and a store this instance can be cut off from; the lost-lease case runs last, as it cuts
     * the application off for good.
     */
    private ConfigurableApplicationContext fragile() {
        if (fragile == null) {
            Map<String, Object> properties = new HashMap<>(storeProperties());
            properties.put("test.freezable", "true");
            properties.put("dlock.namespace", namespace);
            properties.put("dlock.lease-time", "1s");
            properties.put("dlock.operation-timeout", "300ms");
            properties.put("dlock.local-queue-limit", "1");
            properties.put("dlock.metrics.name-patterns", "order:*");
            fragile = start(WebApplicationType.NONE, properties);
        }
        return fragile;
    }

    @Test
    @Order(Integer.MAX_VALUE - 1)
    void theLocalQueueLimitTurnsCallersAway() throws Exception {
        LockedService locked = fragile().getBean(LockedService.class);
        MeterRegistry registry = fragile().getBean(MeterRegistry.class);
        long order = id();
        Lease held = peer.lock("order:" + order).acquire(Duration.ofSeconds(5));
        Future<String> first = threads.submit(() -> locked.shipPatiently(order, () -> "waited"));
        await().atMost(Duration.ofSeconds(5)).until(() -> isWaiting(first));
        assertThatThrownBy(() -> locked.shipPatiently(order, () -> "second")).isInstanceOf(LockRejectedException.class);
        assertThat(locked.shipOrSkip(order, () -> "skipped?")).isNull();
        await().atMost(Duration.ofSeconds(10)).untilAsserted(() -> assertThat(registry.get("dlock.acquire")
                        .tag("name", "order:*")
                        .tag("outcome", "rejected")
                        .timer()
                        .count())
                .isEqualTo(2));
        held.close();
        assertThat(first.get(10, TimeUnit.SECONDS)).isEqualTo("waited");
    }

    @Test
    @Order(Integer.MAX_VALUE)
    void aLeaseLostWhileTheMethodRunsFailsTheCallAndIsCounted() {
        LockedService locked = fragile().getBean(LockedService.class);
        TestApplication.Freezer freezer = fragile().getBean(TestApplication.Freezer.class);
        HealthIndicator health = fragile().getBean("dlockHealthIndicator", HealthIndicator.class);
        MeterRegistry registry = fragile().getBean(MeterRegistry.class);
        assertThat(health.health().getStatus()).isEqualTo(Status.UP);
        assertThatThrownBy(() -> locked.holdUntilLost("x" + id(), null, freezer::freeze))
                .isInstanceOf(LeaseLostException.class)
                .hasMessageContaining("lost");
        await().atMost(Duration.ofSeconds(10)).untilAsserted(() -> assertThat(registry.get("dlock.leases.lost")
                        .tag("name", "other")
                        .tag("reason", "deadline")
                        .counter()
                        .count())
                .isEqualTo(1.0));
        assertThat(health.health().getStatus()).isEqualTo(Status.DOWN);
    }

    private boolean isWaiting(Future<?> task) {
        return !task.isDone()
                && Thread.getAllStackTraces().keySet().stream()
                        .anyMatch(t -> (t.getState() == Thread.State.WAITING
                                        || t.getState() == Thread.State.TIMED_WAITING)
                                && Optional.ofNullable(t.getStackTrace()).stream()
                                        .flatMap(java.util.Arrays::stream)
                                        .anyMatch(frame -> frame.getMethodName().equals("shipPatiently")));
    }
}
