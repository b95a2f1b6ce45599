package dev.dlock.internal;

import static org.assertj.core.api.Assertions.assertThat;

import dev.dlock.Lease;
import dev.dlock.LockClient;
import dev.dlock.spi.ForwardingLockBackend;
import dev.dlock.spi.LockBackend;
import dev.dlock.spi.LockBackendFactory;
import dev.dlock.spi.LockBackendProvider;
import java.time.Duration;
import java.util.concurrent.ThreadLocalRandom;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.atomic.AtomicLong;
import org.junit.jupiter.api.Test;

/**
 * A lease of a session store (its holds live with the client's session, as on ZooKeeper and etcd) is
 * valid no longer than the session is certainly kept: {@link Lease#remaining()} says so as {@link
 * Lease#isValid()} does. Over the memory store, made a session store by a factory that declares a session
 * whose end the test sets.
 */
class SessionBoundTest {
    @Test
    void remainingIsNoMoreThanTheSessionIsCertainlyKept() throws Exception {
        AtomicLong liveUntil = new AtomicLong(System.nanoTime() + TimeUnit.SECONDS.toNanos(60));
        LockBackendFactory memory = LockBackendProvider.factoryFor(
                "mem:session-" + Long.toHexString(ThreadLocalRandom.current().nextLong()));
        LockBackendFactory sessions = context -> {
            LockBackend backend = memory.open(context);
            context.events().leasesAreSession(liveUntil::get);
            return new ForwardingLockBackend(backend) {
                @Override
                public boolean leasesValid() {
                    return liveUntil.get() - System.nanoTime() > 0;
                }
            };
        };
        try (LockClient client =
                LockClient.builder(sessions).leaseTime(Duration.ofSeconds(30)).build()) {
            Lease lease = client.lock("job").acquire(Duration.ofSeconds(5));
            assertThat(lease.remaining()).as("the lease's own time").isGreaterThan(Duration.ofSeconds(25));

            // The session's last answered heartbeat was a while ago: it is kept for 2 s more.
            liveUntil.set(System.nanoTime() + TimeUnit.SECONDS.toNanos(2));
            assertThat(lease.isValid()).isTrue();
            assertThat(lease.remaining())
                    .as("bounded by the session, as isValid() is")
                    .isLessThanOrEqualTo(Duration.ofSeconds(2))
                    .isPositive();

            liveUntil.set(System.nanoTime() - 1);
            assertThat(lease.isValid()).isFalse();
            assertThat(lease.remaining()).isZero();
        }
    }
}
