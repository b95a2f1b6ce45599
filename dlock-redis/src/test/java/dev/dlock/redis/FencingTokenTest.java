package dev.dlock.redis;

import static org.assertj.core.api.Assertions.assertThat;

import dev.dlock.Lease;
import dev.dlock.LockClient;
import dev.dlock.spi.LockKey;
import dev.dlock.spi.Mode;
import java.time.Duration;
import java.util.List;
import org.junit.jupiter.api.Test;

/**
 * Fencing tokens live in a counter key of their own that never expires: they keep increasing across
 * expiry and deletion of the lock's keys, and across a server restart when Redis persists with {@code
 * appendfsync always}. Without persistence the counter is lost, and the server-clock floor of the token
 * (microseconds of {@code TIME}) still keeps tokens increasing.
 */
class FencingTokenTest {
    private static final String NAMESPACE = "fencing";

    private static String tokenKey(String name) {
        return ResourceKeys.of(new LockKey(NAMESPACE, name, Mode.EXCLUSIVE)).tokens();
    }

    private static LockClient client(RedisServer server) {
        return LockClient.builder(server.uri())
                .namespace(NAMESPACE)
                .leaseTime(Duration.ofMillis(200))
                .renewal(false)
                .build();
    }

    @Test
    void tokensSurviveExpiryAndDeletionOfTheLockKeys() throws Exception {
        try (RedisServer server = RedisServer.start();
                LockClient client = client(server)) {
            Lease first = client.lock("expiring").tryAcquire().orElseThrow();
            ResourceKeys keys = ResourceKeys.of(new LockKey(NAMESPACE, "expiring", Mode.EXCLUSIVE));
            // The hold key carries the lease; the counter carries no expiry at all.
            assertThat((Long) server.call("PTTL", keys.holders())).isBetween(1L, 200L);
            assertThat(server.call("PTTL", keys.tokens())).isEqualTo(-1L);
            Thread.sleep(400);
            assertThat(server.call("EXISTS", keys.holders(), keys.expiries())).isEqualTo(0L);
            assertThat(first.isValid()).isFalse();

            Lease second = client.lock("expiring").tryAcquire().orElseThrow();
            assertThat(second.fencingToken()).isGreaterThan(first.fencingToken());
            // Delete everything of the lock but the counter, as an operator cleaning up might.
            server.call("DEL", keys.holders(), keys.expiries(), keys.queue(), keys.waits());
            Lease third = client.lock("expiring").tryAcquire().orElseThrow();
            assertThat(third.fencingToken()).isGreaterThan(second.fencingToken());
            assertThat(client.forceRelease("expiring")).isTrue();
            Lease fourth = client.lock("expiring").tryAcquire().orElseThrow();
            assertThat(fourth.fencingToken()).isGreaterThan(third.fencingToken());
            assertThat(server.call("GET", tokenKey("expiring"))).isEqualTo(Long.toString(fourth.fencingToken()));
        }
    }

    @Test
    void tokensSurviveARestartWithAppendfsyncAlways() {
        try (RedisServer server = RedisServer.start("--appendonly", "yes", "--appendfsync", "always")) {
            long before;
            try (LockClient client = client(server)) {
                before = client.lock("persisted").tryAcquire().orElseThrow().fencingToken();
            }
            server.kill(); // SIGKILL: no shutdown save, only the fsynced append-only file
            server.restart();
            // The counter itself came back from the AOF ...
            assertThat(server.call("GET", tokenKey("persisted"))).isEqualTo(Long.toString(before));
            try (LockClient client = client(server)) {
                long after = client.lock("persisted").tryAcquire().orElseThrow().fencingToken();
                // ... so the next token is greater.
                assertThat(after).isGreaterThan(before);
            }
        }
    }

    @Test
    void withoutPersistenceTheServerClockFloorStillKeepsTokensIncreasing() {
        try (RedisServer server = RedisServer.start()) {
            long before;
            try (LockClient client = client(server)) {
                before = client.lock("volatile").tryAcquire().orElseThrow().fencingToken();
            }
            server.restart();
            assertThat(server.call("GET", tokenKey("volatile")))
                    .as("counter lost")
                    .isNull();
            try (LockClient client = client(server)) {
                long after = client.lock("volatile").tryAcquire().orElseThrow().fencingToken();
                assertThat(after).isGreaterThan(before);
                List<?> time = (List<?>) server.call("TIME");
                long serverMicros =
                        Long.parseLong((String) time.get(0)) * 1_000_000 + Long.parseLong((String) time.get(1));
                // The floor: a token is at least the server clock in microseconds when it was granted.
                assertThat(after).isLessThanOrEqualTo(serverMicros).isGreaterThan(serverMicros - 60_000_000L);
            }
        }
    }

    /**
     * A counter ahead of the server clock (over 62,500 grants a second of one name, a clock set back, a
     * counter restored from elsewhere) keeps rising by the token block; it is never set back to the clock.
     */
    @Test
    void aCounterAheadOfTheClockRisesByTheBlockAndNeverGoesBack() {
        try (RedisServer server = RedisServer.start();
                LockClient client = client(server)) {
            long ahead = 1L << 52; // microseconds of the year 2112, and still exact in the script
            server.call("SET", tokenKey("ahead"), Long.toString(ahead));
            long previous = ahead;
            for (int i = 0; i < 3; i++) {
                Lease lease = client.lock("ahead").tryAcquire().orElseThrow();
                assertThat(lease.fencingToken()).isEqualTo(previous + RedisBackend.TOKEN_BLOCK);
                assertThat(server.call("GET", tokenKey("ahead"))).isEqualTo(Long.toString(lease.fencingToken()));
                previous = lease.fencingToken();
                lease.close();
            }
        }
    }

    @Test
    void tokensAreStrictlyIncreasingPerNameEvenWithinOneMicrosecond() {
        try (RedisServer server = RedisServer.start();
                LockClient client = client(server)) {
            long last = 0;
            for (int i = 0; i < 200; i++) {
                Lease lease = client.lock("fast").tryAcquire().orElseThrow();
                assertThat(lease.fencingToken()).isGreaterThan(last);
                last = lease.fencingToken();
                lease.close();
            }
        }
    }
}
