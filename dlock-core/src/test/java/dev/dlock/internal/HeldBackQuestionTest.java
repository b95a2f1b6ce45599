package dev.dlock.internal;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;

import dev.dlock.LockBackendException;
import dev.dlock.LockClient;
import dev.dlock.spi.ForwardingLockBackend;
import dev.dlock.spi.LockBackendProvider;
import java.time.Duration;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.CompletionStage;
import java.util.function.Supplier;
import org.junit.jupiter.api.Test;

/**
 * {@code LockClient.heldBack()} through the engine: the store's answer as is, a refusal (a store that holds
 * back per lock, not per namespace) as an {@link UnsupportedOperationException}, a failure as a {@link
 * LockBackendException}, and a store that does not answer within the operation timeout.
 */
class HeldBackQuestionTest {
    private static final Duration TIMEOUT = Duration.ofMillis(300);

    private static LockClient client(Supplier<CompletionStage<Duration>> answer) {
        return LockClient.builder(LockBackendProvider.factoryFor("mem:held-back-question")
                        .andThen(backend -> new ForwardingLockBackend(backend) {
                            @Override
                            public CompletionStage<Duration> heldBack(String namespace) {
                                return answer.get();
                            }
                        }))
                .operationTimeout(TIMEOUT)
                .build();
    }

    @Test
    void theStoresAnswerAsIs() {
        try (LockClient client = client(() -> CompletableFuture.completedFuture(Duration.ofMillis(1234)))) {
            assertThat(client.heldBack()).isEqualTo(Duration.ofMillis(1234));
        }
    }

    @Test
    void aRefusalIsAnUnsupportedOperationNotAStoreFailure() {
        try (LockClient client = client(() -> CompletableFuture.failedFuture(
                new UnsupportedOperationException("held back per hash slot: describe(name)")))) {
            assertThatThrownBy(client::heldBack)
                    .isInstanceOf(UnsupportedOperationException.class)
                    .hasMessage("held back per hash slot: describe(name)");
        }
    }

    @Test
    void aFailureIsAStoreFailureNamingTheQuestion() {
        try (LockClient client = client(() -> CompletableFuture.failedFuture(new IllegalStateException("down")))) {
            assertThatThrownBy(client::heldBack)
                    .isInstanceOf(LockBackendException.class)
                    .hasMessageContaining("ask the namespace's hold-back")
                    .hasMessageContaining("down");
        }
    }

    @Test
    void aStoreThatDoesNotAnswerFailsWithinTheOperationTimeout() {
        try (LockClient client = client(CompletableFuture::new)) {
            long start = System.nanoTime();
            assertThatThrownBy(client::heldBack)
                    .isInstanceOf(LockBackendException.class)
                    .hasMessageContaining("did not answer within");
            assertThat(Duration.ofNanos(System.nanoTime() - start)).isLessThan(TIMEOUT.multipliedBy(10));
        }
    }
}
