package dev.dlock.internal;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;

import dev.dlock.Lease;
import dev.dlock.LockBackendException;
import dev.dlock.LockClient;
import dev.dlock.spi.ForwardingLockBackend;
import dev.dlock.spi.LockBackend;
import dev.dlock.spi.LockBackendProvider;
import dev.dlock.spi.LockKey;
import java.time.Duration;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.CompletionStage;
import java.util.concurrent.ThreadLocalRandom;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.atomic.AtomicInteger;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.Timeout;

/**
 * A release the store did not confirm is retried until the store answers, however long past the lease
 * time that is: a store whose hold is bound to a session keeps it that long. The retries back off.
 */
@Timeout(value = 30, unit = TimeUnit.SECONDS)
class ReleaseRetryTest {
    /** Fails every release while {@code down}, as when the connection to the store is lost. */
    private static final class CutOffReleases extends ForwardingLockBackend {
        volatile boolean down;
        final AtomicInteger failed = new AtomicInteger();
        final AtomicInteger reached = new AtomicInteger();

        CutOffReleases(LockBackend delegate) {
            super(delegate);
        }

        @Override
        public CompletionStage<Boolean> release(LockKey key, String owner) {
            if (down) {
                failed.incrementAndGet();
                return CompletableFuture.failedFuture(new IllegalStateException("connection lost (test)"));
            }
            reached.incrementAndGet();
            return delegate.release(key, owner);
        }
    }

    @Test
    void aFailedReleaseIsRetriedPastTheLeaseTimeUntilTheStoreAnswers() throws Exception {
        CutOffReleases[] wire = new CutOffReleases[1];
        String namespace =
                "retry" + Long.toHexString(ThreadLocalRandom.current().nextLong() & 0xffffffffL);
        try (LockClient c = LockClient.builder(LockBackendProvider.factoryFor("mem:release-retry-test")
                        .andThen(b -> wire[0] = new CutOffReleases(b)))
                .namespace(namespace)
                .leaseTime(Duration.ofMillis(300))
                .build()) {
            Lease lease = c.lock("retried").acquire(Duration.ofSeconds(5));
            wire[0].down = true;
            assertThatThrownBy(lease::close).isInstanceOf(LockBackendException.class);
            Thread.sleep(2_000); // more than six lease times without an answer
            int triesWhileDown = wire[0].failed.get();
            wire[0].down = false;
            long deadline = System.nanoTime() + TimeUnit.SECONDS.toNanos(5);
            while (wire[0].reached.get() == 0 && System.nanoTime() - deadline < 0) {
                Thread.sleep(10);
            }
            assertThat(wire[0].reached.get())
                    .as("a retry reached the store once it answered again")
                    .isEqualTo(1);
            // 50 ms doubling to 1 s: 50, 100, 200, 400, 800, 1000 ms between tries, so at most 6 in 2 s.
            assertThat(triesWhileDown).as("tries while the store was cut off").isBetween(3, 8);
        }
    }
}
