package dev.dlock.redis;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;

import dev.dlock.Lease;
import dev.dlock.LeaseLostException;
import dev.dlock.LockBackendException;
import dev.dlock.LockClient;
import java.time.Duration;
import java.util.concurrent.TimeUnit;
import org.junit.jupiter.api.BeforeAll;
import org.junit.jupiter.api.Test;

/** Server crashes and hangs, seen by a client built once and never rebuilt. */
class FaultTest {
    private static final Duration TIMEOUT = Duration.ofMillis(500);

    @BeforeAll
    static void warmUp() {
        // The first Lettuce connection of a JVM loads and links many classes; on a loaded machine that
        // alone can exceed the short connect timeout used below.
        try (RedisServer server = RedisServer.start();
                LockClient client = LockClient.builder(server.uri()).build()) {
            client.lock("warm-up").tryAcquire().orElseThrow().close();
        }
    }

    @Test
    void killedServerMakesAHeldLeaseLostWithinTheLeaseTime() throws Exception {
        Duration lease = Duration.ofSeconds(1);
        try (RedisServer server = RedisServer.start();
                LockClient client = LockClient.builder(server.uri())
                        .leaseTime(lease)
                        .operationTimeout(TIMEOUT)
                        .build()) {
            Lease held = client.lock("crash").acquire(Duration.ofSeconds(5));
            long killed = System.nanoTime();
            server.kill();
            LeaseLostException signal = held.whenLost().get(5, TimeUnit.SECONDS);
            long millis = TimeUnit.NANOSECONDS.toMillis(System.nanoTime() - killed);
            assertThat(signal).hasMessageContaining("crash");
            assertThat(millis).isLessThanOrEqualTo(lease.toMillis() + 200);
            assertThat(held.isValid()).isFalse();
        }
    }

    @Test
    void hungServerFailsAcquireWithinTheTimeoutAndTheClientRecovers() throws Exception {
        try (RedisServer server = RedisServer.start();
                LockClient client = LockClient.builder(server.uri())
                        .operationTimeout(TIMEOUT)
                        .build()) {
            client.lock("hang").tryAcquire().orElseThrow().close();
            server.freeze(); // SIGSTOP: the socket stays open, nothing answers
            try {
                long start = System.nanoTime();
                assertThatThrownBy(() -> client.lock("hang").acquire(Duration.ofSeconds(30)))
                        .isInstanceOf(LockBackendException.class);
                assertThat(TimeUnit.NANOSECONDS.toMillis(System.nanoTime() - start))
                        .isLessThan(TIMEOUT.toMillis() + 1_000);
            } finally {
                server.thaw();
            }
            try (Lease lease = client.lock("hang").acquire(Duration.ofSeconds(5))) {
                assertThat(lease.isValid()).isTrue();
            }
        }
    }

    @Test
    void deadServerFailsAtOnceAndTheSameClientWorksAfterARestart() throws Exception {
        try (RedisServer server = RedisServer.start();
                LockClient client = LockClient.builder(server.uri())
                        .operationTimeout(TIMEOUT)
                        .build()) {
            client.lock("restart").tryAcquire().orElseThrow().close();
            server.kill();
            long start = System.nanoTime();
            assertThatThrownBy(() -> client.lock("restart").acquire(Duration.ofSeconds(30)))
                    .isInstanceOf(LockBackendException.class);
            assertThat(TimeUnit.NANOSECONDS.toMillis(System.nanoTime() - start))
                    .as("a refused connection fails without waiting for the timeout")
                    .isLessThan(TIMEOUT.toMillis() + 1_000);
            server.restart();
            long deadline = System.nanoTime() + TimeUnit.SECONDS.toNanos(10);
            Lease lease = null;
            while (lease == null) {
                try {
                    lease = client.lock("restart").acquire(Duration.ofSeconds(2));
                } catch (LockBackendException e) {
                    assertThat(System.nanoTime())
                            .as("recovered within 10 s: " + e)
                            .isLessThan(deadline);
                    Thread.sleep(50);
                }
            }
            // The script cache was emptied by the restart: the EVAL fallback reloaded it.
            assertThat(lease.isValid()).isTrue();
            lease.close();
            // Waiting works again too: the pub/sub connection is back.
            Lease holder = client.lock("restart").acquire(Duration.ofSeconds(5));
            try (LockClient other = LockClient.builder(server.uri()).build()) {
                var waiter = other.lock("restart").acquireAsync(Duration.ofSeconds(10));
                Thread.sleep(200);
                holder.close();
                waiter.get(5, TimeUnit.SECONDS).close();
            }
        }
    }

    @Test
    void unreachableServerFailsTheBuildWithABackendException() {
        int port = RedisServer.freePort();
        assertThatThrownBy(() -> LockClient.builder("redis://127.0.0.1:" + port)
                        .operationTimeout(TIMEOUT)
                        .build())
                .isInstanceOf(LockBackendException.class)
                .hasMessageContaining("127.0.0.1:" + port);
    }
}
