package dev.dlock.internal;

import static org.assertj.core.api.Assertions.assertThat;

import dev.dlock.Lease;
import dev.dlock.LockClient;
import dev.dlock.LockInfo;
import dev.dlock.spi.AcquireRequest;
import dev.dlock.spi.AcquireResult;
import dev.dlock.spi.LockBackend;
import dev.dlock.spi.LockBackendProvider;
import java.lang.reflect.InvocationTargetException;
import java.lang.reflect.Proxy;
import java.time.Duration;
import java.util.List;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.ExecutionException;
import java.util.concurrent.TimeUnit;
import java.util.function.Consumer;
import java.util.function.Supplier;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.Timeout;

/**
 * An acquire answer that arrives just as its call times out: either the caller gets the grant and the store
 * keeps it, or the caller gets the timeout and the grant is given back - never both (a caller that believes
 * it holds a lock the store has released is a second holder in waiting).
 */
@Timeout(60)
class LateAnswerRaceTest {
    private static final Duration TIMEOUT = Duration.ofMillis(300);

    /**
     * A store answer that lands at the worst moment: the instant the engine starts watching for a late
     * answer, before it has failed the call. When nothing watches, it lands a little after the timeout.
     */
    private static final class AnswerWhenWatched extends CompletableFuture<AcquireResult> {
        private final Supplier<AcquireResult> store;
        private AcquireResult answer;

        AnswerWhenWatched(Supplier<AcquireResult> store) {
            this.store = store;
            CompletableFuture.delayedExecutor(TIMEOUT.toMillis() + 300, TimeUnit.MILLISECONDS)
                    .execute(this::answer);
        }

        /** Asks the store once, and completes with its answer. */
        private synchronized void answer() {
            if (answer == null) {
                answer = store.get();
            }
            complete(answer);
        }

        @Override
        public CompletableFuture<Void> thenAccept(Consumer<? super AcquireResult> action) {
            CompletableFuture<Void> registered = super.thenAccept(action);
            answer();
            return registered;
        }
    }

    @Test
    void aGrantThatRacesItsTimeoutIsEitherTheCallersOrGivenBack() throws Exception {
        String uri = "mem:late-answer-race";
        try (LockClient client = LockClient.builder(LockBackendProvider.factoryFor(uri)
                                .andThen(backend -> (LockBackend) Proxy.newProxyInstance(
                                        LockBackend.class.getClassLoader(),
                                        new Class<?>[] {LockBackend.class},
                                        (proxy, method, args) -> {
                                            if (method.getName().equals("acquire")) {
                                                AcquireRequest request = (AcquireRequest) args[0];
                                                return new AnswerWhenWatched(() -> backend.acquire(request)
                                                        .toCompletableFuture()
                                                        .join());
                                            }
                                            try {
                                                return method.invoke(backend, args);
                                            } catch (InvocationTargetException e) {
                                                throw e.getCause();
                                            }
                                        })))
                        .namespace("race")
                        .operationTimeout(TIMEOUT)
                        .build();
                LockClient observer = LockClient.builder(uri).namespace("race").build()) {
            CompletableFuture<Lease> attempt = client.lock("racy").acquireAsync(Duration.ZERO);
            Lease lease = null;
            try {
                lease = attempt.get(10, TimeUnit.SECONDS);
            } catch (ExecutionException timedOut) {
                // the caller was told the store did not answer: the grant must be given back
            }
            Thread.sleep(TIMEOUT.toMillis() + 700); // the late answer, and any give-back, has happened
            List<LockInfo> held = observer.describe("racy");
            if (lease != null) {
                assertThat(held)
                        .as("the caller holds the lease, so the store must still hold it")
                        .singleElement()
                        .satisfies(info -> assertThat(info.holders()).hasSize(1));
                assertThat(lease.isValid()).isTrue();
                lease.close();
            } else {
                assertThat(held)
                        .as("the caller was told it timed out, so the grant is given back")
                        .isEmpty();
            }
        }
    }
}
