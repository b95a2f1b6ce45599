package dev.dlock.internal;

import static org.assertj.core.api.Assertions.assertThat;

import dev.dlock.LockClient;
import dev.dlock.spi.AcquireRequest;
import dev.dlock.spi.AcquireResult;
import dev.dlock.spi.ForwardingLockBackend;
import dev.dlock.spi.LockBackend;
import dev.dlock.spi.LockBackendProvider;
import dev.dlock.spi.LockKey;
import java.time.Duration;
import java.util.Set;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.CompletionStage;
import java.util.concurrent.ConcurrentHashMap;
import java.util.concurrent.ThreadLocalRandom;
import java.util.concurrent.TimeUnit;
import java.util.function.Supplier;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.Timeout;

/**
 * A give-back (of a grant that came too late) and the queue exit of a wait that ended are retried until
 * the store answers them, as releases are: a store that binds them to a session (ZooKeeper, etcd) keeps a
 * lost one as long as the session, far longer than the lease time.
 */
@Timeout(value = 30, unit = TimeUnit.SECONDS)
class GiveBackRetryTest {
    /** Fails releases and queue exits while {@code down}; records the owners whose ones reached the store. */
    private static final class CutOffEndings extends ForwardingLockBackend {
        volatile boolean down;
        volatile long acquireDelayMillis;
        final Set<String> released = ConcurrentHashMap.newKeySet();
        final Set<String> leftQueue = ConcurrentHashMap.newKeySet();
        final Set<String> granted = ConcurrentHashMap.newKeySet();

        CutOffEndings(LockBackend delegate) {
            super(delegate);
        }

        @Override
        public CompletionStage<AcquireResult> acquire(AcquireRequest request) {
            long delay = acquireDelayMillis;
            CompletionStage<AcquireResult> answer = delay == 0
                    ? delegate.acquire(request)
                    : CompletableFuture.supplyAsync(
                                    () -> null, CompletableFuture.delayedExecutor(delay, TimeUnit.MILLISECONDS))
                            .thenCompose(go -> delegate.acquire(request));
            return answer.thenApply(result -> {
                if (result.isGranted()) {
                    granted.add(request.owner());
                }
                return result;
            });
        }

        @Override
        public CompletionStage<Boolean> release(LockKey key, String owner) {
            return reachesTheStore(released, owner, () -> delegate.release(key, owner));
        }

        @Override
        public CompletionStage<Void> cancelWait(LockKey key, String owner) {
            return reachesTheStore(leftQueue, owner, () -> delegate.cancelWait(key, owner));
        }

        private <T> CompletionStage<T> reachesTheStore(
                Set<String> owners, String owner, Supplier<CompletionStage<T>> call) {
            if (down) {
                return CompletableFuture.failedFuture(new IllegalStateException("connection lost (test)"));
            }
            owners.add(owner);
            return call.get();
        }
    }

    private static String newNamespace() {
        return "giveback" + Long.toHexString(ThreadLocalRandom.current().nextLong() & 0xffffffffL);
    }

    private static LockClient client(CutOffEndings[] wire, Duration lease, String namespace) {
        return LockClient.builder(LockBackendProvider.factoryFor("mem:give-back-retry-test")
                        .andThen(b -> wire[0] = new CutOffEndings(b)))
                .namespace(namespace)
                .leaseTime(lease)
                .build();
    }

    private static void awaitTrue(java.util.function.BooleanSupplier condition) throws InterruptedException {
        long deadline = System.nanoTime() + TimeUnit.SECONDS.toNanos(5);
        while (!condition.getAsBoolean() && System.nanoTime() - deadline < 0) {
            Thread.sleep(10);
        }
    }

    @Test
    void aGiveBackThatFailsIsRetriedUntilTheStoreAnswers() throws Exception {
        CutOffEndings[] wire = new CutOffEndings[1];
        try (LockClient c = client(wire, Duration.ofMillis(300), newNamespace())) {
            wire[0].acquireDelayMillis = 400; // granted after the lease's local deadline: given back
            wire[0].down = true;
            assertThat(c.lock("late").tryAcquire())
                    .as("a grant after the lease's deadline")
                    .isEmpty();
            assertThat(wire[0].granted).as("the store granted the late attempt").hasSize(1);
            Thread.sleep(500); // the give-back failed, and its first retries too
            wire[0].down = false;
            awaitTrue(() -> wire[0].released.containsAll(wire[0].granted));
            assertThat(wire[0].released)
                    .as("the give-back reached the store once it answered again")
                    .containsAll(wire[0].granted);
        }
    }

    @Test
    void theQueueExitOfACancelledWaitIsRetriedUntilTheStoreAnswers() throws Exception {
        CutOffEndings[] wire = new CutOffEndings[1];
        String namespace = newNamespace();
        try (LockClient holder = client(new CutOffEndings[1], Duration.ofSeconds(10), namespace);
                LockClient c = client(wire, Duration.ofSeconds(1), namespace)) {
            var held = holder.lock("queue").acquire(Duration.ofSeconds(5));
            CompletableFuture<?> waiting = c.lock("queue").acquireAsync(Duration.ofSeconds(20));
            Thread.sleep(300); // its attempts reached the store: it waits there
            assertThat(waiting).isNotDone();
            wire[0].down = true;
            waiting.cancel(true);
            Thread.sleep(500); // the queue exit failed, and its first retries too
            assertThat(wire[0].leftQueue).isEmpty();
            wire[0].down = false;
            awaitTrue(() -> !wire[0].leftQueue.isEmpty());
            assertThat(wire[0].leftQueue)
                    .as("the queue exit reached the store once it answered again")
                    .isNotEmpty();
            held.close();
        }
    }
}
