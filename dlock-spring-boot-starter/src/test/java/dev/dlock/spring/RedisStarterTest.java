package dev.dlock.spring;

import static org.assertj.core.api.Assertions.assertThat;

import dev.dlock.Lease;
import dev.dlock.LockClient;
import dev.dlock.testsupport.FreePorts;
import dev.dlock.testsupport.RedisProcess;
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
        redis = RedisProcess.start();
        downPort = FreePorts.next();
    }

    @Override
    void stopStore() throws Exception {
        if (redis != null) {
            redis.close();
        }
    }

    @Override
    Map<String, Object> storeProperties() {
        // A fresh server cannot be told from one restarted without persistence: the contract here is not
        // about restarts, so these applications opt out of the hold-back (tested on its own below).
        return Map.of(
                "spring.data.redis.host",
                "127.0.0.1",
                "spring.data.redis.port",
                redis.port(),
                "dlock.redis.unsafe-grant-after-restart",
                true);
    }

    @Override
    String peerUri() {
        return "redis://127.0.0.1:" + redis.port() + "?unsafeGrantAfterRestart=true"; // a fresh server, as above
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
        try (ConfigurableApplicationContext byUri =
                start(WebApplicationType.NONE, Map.of("dlock.uri", peerUri(), "dlock.namespace", "by-uri"))) {
            assertThat(byUri.getBean(DlockStore.class).description()).isEqualTo(peerUri());
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
    void theApplicationsClientHoldsGrantsBackForTheDeclaredMaxLeaseOnAFreshServer() throws Exception {
        try (RedisProcess fresh = RedisProcess.start()) {
            long started = System.nanoTime();
            Map<String, Object> properties = Map.of(
                    "spring.data.redis.host", "127.0.0.1",
                    "spring.data.redis.port", fresh.port(),
                    "dlock.lease-time", "2s",
                    // Longer than the application's start on a loaded machine (a dry run took over 2 s
                    // with a 2 s max lease, and the hold-back had ended before the first tryLock).
                    "dlock.redis.max-lease", "6s",
                    "dlock.namespace", "held-back");
            try (ConfigurableApplicationContext app = start(WebApplicationType.NONE, properties)) {
                LockClient client = app.getBean(LockClient.class);
                // The server may have lost the grants of a client with up to 6 s leases: it holds back.
                assertThat(client.lock("first").tryAcquire()).isEmpty();
                try (Lease lease = client.lock("first").acquire(Duration.ofSeconds(15))) {
                    assertThat(Duration.ofNanos(System.nanoTime() - started)).isGreaterThan(Duration.ofSeconds(1));
                    assertThat(lease.isValid()).isTrue();
                }
            }
            Map<String, Object> optedOut = new java.util.HashMap<>(properties);
            optedOut.put("dlock.namespace", "opted-out");
            optedOut.put("dlock.redis.unsafe-grant-after-restart", true);
            try (RedisProcess another = RedisProcess.start()) {
                optedOut.put("spring.data.redis.port", another.port());
                try (ConfigurableApplicationContext app = start(WebApplicationType.NONE, optedOut)) {
                    assertThat(app.getBean(LockClient.class).lock("first").tryAcquire())
                            .isPresent();
                }
            }
        }
    }

    @Test
    void aRedlockUriIsAccepted() throws Exception {
        try (RedisProcess second = RedisProcess.start();
                RedisProcess third = RedisProcess.start()) {
            // Two fresh masters: without the opt-out they hold their first grant back for maxLease (30 s).
            String uri = "redlock://127.0.0.1:" + redis.port() + ",127.0.0.1:" + second.port() + ",127.0.0.1:"
                    + third.port() + "?unsafeGrantAfterRestart=true";
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
