package dev.dlock.spring;

import static org.assertj.core.api.Assertions.assertThat;

import dev.dlock.Lease;
import dev.dlock.LockClient;
import dev.dlock.tck.RedisProcess;
import java.time.Duration;
import java.util.List;
import java.util.Map;
import org.junit.jupiter.api.Test;
import org.springframework.boot.WebApplicationType;
import org.springframework.context.ConfigurableApplicationContext;

/**
 * The starter contract on a real Redis server (a {@code redis-server} this test starts), reached through
 * the application's own Spring Data Redis {@code LettuceConnectionFactory} ({@code spring.data.redis.*}),
 * plus a start from a {@code redis://} URI.
 */
class RedisStarterTest extends StarterContractTest {
    private RedisProcess redis;
    private int downPort;

    @Override
    void startStore() throws Exception {
        redis = RedisProcess.start(null);
        downPort = RedisProcess.freePort();
    }

    @Override
    void stopStore() throws Exception {
        if (redis != null) {
            redis.close();
        }
    }

    @Override
    Map<String, Object> storeProperties() {
        return Map.of("spring.data.redis.host", "127.0.0.1", "spring.data.redis.port", redis.port());
    }

    @Override
    String peerUri() {
        return "redis://127.0.0.1:" + redis.port();
    }

    @Override
    Map<String, Object> downStoreProperties() {
        return Map.of("spring.data.redis.host", "127.0.0.1", "spring.data.redis.port", downPort);
    }

    @Override
    String downStoreText() {
        return "the lock store at redis://127.0.0.1:" + downPort + "/0 (the application's LettuceConnectionFactory)";
    }

    @Override
    List<String> unusedStoreAutoConfigurations() {
        return List.of(JDBC_AUTO_CONFIGURATION);
    }

    @Test
    void theStoreIsTheApplicationsConnectionFactoryOrTheUri() throws Exception {
        assertThat(app().getBean(DlockStore.class).description())
                .isEqualTo("redis://127.0.0.1:" + redis.port() + "/0 (the application's LettuceConnectionFactory)");
        try (ConfigurableApplicationContext byUri = start(
                WebApplicationType.NONE,
                Map.of("dlock.uri", "redis://127.0.0.1:" + redis.port(), "dlock.namespace", "by-uri"))) {
            assertThat(byUri.getBean(DlockStore.class).description()).isEqualTo("redis://127.0.0.1:" + redis.port());
            LockedService service = byUri.getBean(LockedService.class);
            try (LockClient peer =
                    LockClient.builder(peerUri()).namespace("by-uri").build()) {
                long token = service.tokenWhile(
                        42, null, () -> assertThat(peer.describe("order:42")).hasSize(1));
                try (Lease next = peer.lock("order:42").acquire(Duration.ofSeconds(5))) {
                    assertThat(next.fencingToken()).isGreaterThan(token);
                }
            }
        }
    }

    @Test
    void aRedlockUriIsAccepted() throws Exception {
        try (RedisProcess second = RedisProcess.start(null);
                RedisProcess third = RedisProcess.start(null)) {
            String uri = "redlock://127.0.0.1:" + redis.port() + ",127.0.0.1:" + second.port() + ",127.0.0.1:"
                    + third.port();
            try (ConfigurableApplicationContext byUri =
                            start(WebApplicationType.NONE, Map.of("dlock.uri", uri, "dlock.namespace", "redlock"));
                    LockClient peer =
                            LockClient.builder(uri).namespace("redlock").build()) {
                long token = byUri.getBean(LockedService.class)
                        .tokenWhile(7, null, () -> assertThat(peer.describe("order:7"))
                                .hasSize(1));
                try (Lease next = peer.lock("order:7").acquire(Duration.ofSeconds(5))) {
                    assertThat(next.fencingToken()).isGreaterThan(token);
                }
            }
        }
    }
}
