package dev.dlock.internal;

import static org.assertj.core.api.Assertions.assertThat;

import dev.dlock.Lease;
import dev.dlock.LockBackendException;
import dev.dlock.LockClient;
import dev.dlock.spi.AcquireRequest;
import dev.dlock.spi.LockBackend;
import dev.dlock.spi.LockBackendProvider;
import java.lang.reflect.InvocationTargetException;
import java.lang.reflect.Proxy;
import java.time.Duration;
import java.util.ArrayList;
import java.util.List;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.ExecutionException;
import java.util.concurrent.TimeUnit;
import org.junit.jupiter.api.AfterEach;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.Timeout;

/** The operation timeout of store calls, served by one timer for all calls of a client. */
@Timeout(60)
class EngineTimeoutTest {
    private static final Duration TIMEOUT = Duration.ofMillis(400);
    private LockClient client;

    @AfterEach
    void close() {
        if (client != null) {
            client.close();
        }
    }

    /** A client whose store never answers an acquire for a name starting with "stuck". */
    private LockClient clientWithStuckNames() {
        client = LockClient.builder(LockBackendProvider.factoryFor("mem:engine-timeout-test")
                        .andThen(backend -> (LockBackend) Proxy.newProxyInstance(
                                LockBackend.class.getClassLoader(),
                                new Class<?>[] {LockBackend.class},
                                (proxy, method, args) -> {
                                    if (method.getName().equals("acquire")
                                            && ((AcquireRequest) args[0])
                                                    .key()
                                                    .name()
                                                    .startsWith("stuck")) {
                                        return new CompletableFuture<>(); // a store that does not answer
                                    }
                                    try {
                                        return method.invoke(backend, args);
                                    } catch (InvocationTargetException e) {
                                        throw e.getCause();
                                    }
                                })))
                .namespace("engine-timeout")
                .operationTimeout(TIMEOUT)
                .build();
        return client;
    }

    @Test
    void everyUnansweredCallFailsAtItsOwnDeadline() throws Exception {
        LockClient c = clientWithStuckNames();
        List<CompletableFuture<Lease>> calls = new ArrayList<>();
        List<Long> started = new ArrayList<>();
        for (int i = 0; i < 20; i++) {
            started.add(System.nanoTime());
            calls.add(c.lock("stuck-" + i).acquireAsync(Duration.ofSeconds(30)));
            Thread.sleep(20); // deadlines 20 ms apart
        }
        for (int i = 0; i < calls.size(); i++) {
            try {
                calls.get(i).get(10, TimeUnit.SECONDS);
                throw new AssertionError("call " + i + " succeeded against a store that never answers");
            } catch (ExecutionException e) {
                long tookMillis = TimeUnit.NANOSECONDS.toMillis(System.nanoTime() - started.get(i));
                assertThat(e.getCause())
                        .isInstanceOf(LockBackendException.class)
                        .hasMessageContaining("did not answer within");
                assertThat(tookMillis).as("call %d", i).isGreaterThanOrEqualTo(TIMEOUT.toMillis());
            }
        }
        long lastTook = TimeUnit.NANOSECONDS.toMillis(System.nanoTime() - started.get(calls.size() - 1));
        assertThat(lastTook).isLessThan(TIMEOUT.toMillis() + 3_000);
    }

    @Test
    void answeredCallsAreNotHeldUpByAnUnansweredOne() throws Exception {
        LockClient c = clientWithStuckNames();
        long start = System.nanoTime();
        CompletableFuture<Lease> stuck = c.lock("stuck").acquireAsync(Duration.ofSeconds(30));
        // Answered calls keep completing while the stuck one waits: counted are those that completed
        // while the stuck call was still unanswered (an engine that held answers behind the oldest
        // unanswered call would complete none before the stuck call timed out). Bounded by time, not by
        // count, so a slow machine does not outrun the stuck call's timeout.
        int cycles = 0;
        int whileStuck = 0;
        do {
            c.lock("free-" + (cycles++ % 5)).acquire(Duration.ofSeconds(1)).close();
            if (!stuck.isDone()) {
                whileStuck++;
            }
        } while (System.nanoTime() - start < TIMEOUT.toNanos() / 4);
        assertThat(whileStuck).as("calls answered while the stuck call waited").isPositive();
        try {
            stuck.get(10, TimeUnit.SECONDS);
            throw new AssertionError("the stuck call succeeded");
        } catch (ExecutionException e) {
            assertThat(e.getCause()).isInstanceOf(LockBackendException.class);
        }
        assertThat(TimeUnit.NANOSECONDS.toMillis(System.nanoTime() - start))
                .isGreaterThanOrEqualTo(TIMEOUT.toMillis())
                .isLessThan(TIMEOUT.toMillis() + 3_000);
        // The client keeps working afterwards, and a new unanswered call times out as well.
        c.lock("free-0").acquire(Duration.ofSeconds(1)).close();
        CompletableFuture<Lease> again = c.lock("stuck-again").acquireAsync(Duration.ofSeconds(30));
        try {
            again.get(10, TimeUnit.SECONDS);
            throw new AssertionError("the second stuck call succeeded");
        } catch (ExecutionException e) {
            assertThat(e.getCause()).isInstanceOf(LockBackendException.class);
        }
    }
}
