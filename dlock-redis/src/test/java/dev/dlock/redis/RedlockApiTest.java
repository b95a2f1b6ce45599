package dev.dlock.redis;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;

import dev.dlock.Lease;
import dev.dlock.LockClient;
import io.lettuce.core.RedisClient;
import java.time.Duration;
import org.junit.jupiter.api.Test;

/** Redlock's URIs, factories and refusals. */
class RedlockApiTest {
    @Test
    void uriNeedsAnOddNumberOfAtLeastThreeMasters() {
        assertThatThrownBy(() -> LockClient.connect("redlock://a:1,b:2"))
                .isInstanceOf(IllegalArgumentException.class)
                .hasMessageContaining("odd number of at least 3")
                .hasMessageContaining("got 2");
        assertThatThrownBy(() -> LockClient.connect("redlock://a:1,b:2,c:3,d:4"))
                .isInstanceOf(IllegalArgumentException.class)
                .hasMessageContaining("got 4");
        assertThatThrownBy(() -> LockClient.connect("redlocks://a:1"))
                .isInstanceOf(IllegalArgumentException.class)
                .hasMessageContaining("got 1");
        assertThatThrownBy(() -> LockClient.connect("redlock://a:1,,c:3"))
                .isInstanceOf(IllegalArgumentException.class)
                .hasMessageContaining("empty host");
    }

    @Test
    void optionsAreParsedAndCheckedBeforeConnecting() {
        RedisUris.Parsed parsed = RedisUris.parse(
                "redlocks://user:secret@a:1,b:2,c:3/2?minUptime=30s&masterTimeout=50ms&allowEviction=true");
        assertThat(parsed.topology()).isEqualTo(RedisUris.Topology.REDLOCK);
        assertThat(parsed.servers()).hasSize(3).allSatisfy(server -> {
            assertThat(server.isSsl()).isTrue();
            assertThat(server.getDatabase()).isEqualTo(2);
            assertThat(server.getUsername()).isEqualTo("user");
        });
        assertThat(parsed.minUptime()).isEqualTo(Duration.ofSeconds(30));
        assertThat(parsed.masterTimeout()).isEqualTo(Duration.ofMillis(50));
        assertThat(parsed.allowEviction()).isTrue();
        assertThatThrownBy(() -> RedisUris.parse("redis://a:1?minUptime=30s"))
                .isInstanceOf(IllegalArgumentException.class)
                .hasMessageContaining("only to redlock://");
        assertThatThrownBy(() -> RedisUris.parse("redlock://a:1,b:2,c:3?masterTimeout=soon"))
                .isInstanceOf(IllegalArgumentException.class)
                .hasMessageContaining("masterTimeout");
        assertThatThrownBy(() -> RedisUris.parse("redlock://u:secret@a:1,b:2,c:3?allowEviction=maybe"))
                .isInstanceOf(IllegalArgumentException.class)
                .hasMessageContaining("allowEviction")
                .hasMessageNotContaining("secret");
    }

    @Test
    void factoryFromClientsNeedsAnOddNumberOfAtLeastThree() {
        RedisClient a = RedisClient.create("redis://127.0.0.1:1");
        RedisClient b = RedisClient.create("redis://127.0.0.1:2");
        try {
            assertThatThrownBy(() -> RedlockBackends.of(a, b))
                    .isInstanceOf(IllegalArgumentException.class)
                    .hasMessageContaining("got 2");
        } finally {
            a.shutdown();
            b.shutdown();
        }
    }

    @Test
    void clientsOfTheApplicationWorkAndFairLocksAndSemaphoresAreRefusedNamingRedlock() {
        try (RedlockServers servers = new RedlockServers(3)) {
            servers.all().forEach(server -> server.markFresh("dlock")); // default settings, fresh masters
            RedisClient[] clients = servers.all().stream()
                    .map(server -> RedisClient.create(server.plainUri()))
                    .toArray(RedisClient[]::new);
            try (LockClient client =
                    LockClient.builder(RedlockBackends.of(clients)).build()) {
                assertThatThrownBy(() -> client.fairLock("f"))
                        .isInstanceOf(UnsupportedOperationException.class)
                        .hasMessageContaining("fair locks")
                        .hasMessageContaining("Redlock");
                assertThatThrownBy(() -> client.semaphore("s", 2))
                        .isInstanceOf(UnsupportedOperationException.class)
                        .hasMessageContaining("semaphores")
                        .hasMessageContaining("Redlock");
                try (Lease lease = client.lock("l").acquire(Duration.ofSeconds(5))) {
                    assertThat(client.describe("l").get(0).holders().get(0).fencingToken())
                            .isEqualTo(lease.fencingToken());
                }
                assertThat(client.readWriteLock("rw").readLock().tryAcquire()).isPresent();
            } finally {
                for (RedisClient redis : clients) {
                    redis.shutdown();
                }
            }
        }
    }

    @Test
    void fewerThanAMajorityReachableAtConnectFailsListingEachMaster() throws Exception {
        try (RedlockServers servers = new RedlockServers(3)) {
            servers.get(0).kill();
            servers.get(1).kill();
            assertThatThrownBy(() -> LockClient.builder(servers.uri())
                            .operationTimeout(Duration.ofSeconds(1))
                            .build())
                    .isInstanceOf(dev.dlock.LockBackendException.class)
                    .hasMessageContaining("127.0.0.1:" + servers.get(0).port() + " error")
                    .hasMessageContaining("127.0.0.1:" + servers.get(2).port() + " connected");
            // A minority down at connect: the client starts, and picks the master up when it returns.
            servers.get(1).restart();
            try (LockClient client = LockClient.builder(servers.uri())
                    .operationTimeout(Duration.ofSeconds(1))
                    .build()) {
                assertThat(client.lock("x").tryAcquire()).isPresent();
                servers.get(0).restart();
                servers.get(2).kill();
                long deadline = System.nanoTime() + Duration.ofSeconds(10).toNanos();
                while (true) {
                    try {
                        client.lock("y").tryAcquire().orElseThrow().close();
                        break;
                    } catch (dev.dlock.LockBackendException e) {
                        assertThat(System.nanoTime() - deadline)
                                .as("master 0 joined: " + e)
                                .isNegative();
                        Thread.sleep(100);
                    }
                }
            }
        }
    }
}
