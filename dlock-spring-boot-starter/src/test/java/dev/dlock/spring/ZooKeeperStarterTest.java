package dev.dlock.spring;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;

import dev.dlock.Lease;
import dev.dlock.LockClient;
import dev.dlock.LockTimeoutException;
import java.time.Duration;
import java.util.ArrayList;
import java.util.List;
import java.util.Map;
import java.util.concurrent.ExecutorService;
import java.util.concurrent.Executors;
import java.util.concurrent.Future;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.atomic.AtomicLong;
import org.apache.curator.test.TestingServer;
import org.junit.jupiter.api.Test;
import org.springframework.boot.WebApplicationType;
import org.springframework.boot.builder.SpringApplicationBuilder;
import org.springframework.boot.health.contributor.HealthIndicator;
import org.springframework.boot.health.contributor.Status;
import org.springframework.context.ConfigurableApplicationContext;

/**
 * The store built from the application's own {@code CuratorFramework} bean, on a ZooKeeper server run in
 * this JVM (curator-test): chosen without {@code dlock.uri}, serialises calls, hands out the lease with the
 * token the store reports, and reports health. The full contract runs on the in-memory store, Redis and
 * PostgreSQL; this checks the ZooKeeper wiring.
 */
class ZooKeeperStarterTest {
    @Test
    void theApplicationsCuratorClientIsTheStore() throws Exception {
        ExecutorService threads = Executors.newFixedThreadPool(4);
        try (TestingServer zookeeper = new TestingServer(true);
                ConfigurableApplicationContext app = new SpringApplicationBuilder(TestApplication.class)
                        .web(WebApplicationType.NONE)
                        .properties(Map.of(
                                "spring.main.banner-mode",
                                "off",
                                "spring.autoconfigure.exclude",
                                StarterContractTest.REDIS_AUTO_CONFIGURATION + ","
                                        + StarterContractTest.JDBC_AUTO_CONFIGURATION,
                                "test.zookeeper.connect",
                                zookeeper.getConnectString(),
                                "dlock.namespace",
                                "zk-starter"))
                        .run();
                LockClient peer = LockClient.builder("zookeeper://" + zookeeper.getConnectString())
                        .namespace("zk-starter")
                        .build()) {
            assertThat(app.getBean(DlockStore.class).description())
                    .isEqualTo("ZooKeeper " + zookeeper.getConnectString() + " (the application's CuratorFramework)");
            LockedService service = app.getBean(LockedService.class);

            List<Future<?>> calls = new ArrayList<>();
            for (int t = 0; t < 4; t++) {
                calls.add(threads.submit(() -> {
                    for (int i = 0; i < 10; i++) {
                        service.increment("zk");
                    }
                    return null;
                }));
            }
            for (Future<?> call : calls) {
                call.get(60, TimeUnit.SECONDS);
            }
            assertThat(service.counter()).isEqualTo(40);
            assertThat(service.maxInside()).isEqualTo(1);

            AtomicLong seen = new AtomicLong();
            long token = service.tokenWhile(
                    1,
                    null,
                    () -> seen.set(
                            peer.describe("order:1").get(0).holders().get(0).fencingToken()));
            assertThat(token).isEqualTo(seen.get());
            try (Lease held = peer.lock("order:1").acquire(Duration.ofSeconds(5))) {
                assertThat(held.fencingToken()).isGreaterThan(token);
                assertThatThrownBy(() -> service.token(1, null)).isInstanceOf(LockTimeoutException.class);
            }

            HealthIndicator health = app.getBean("dlockHealthIndicator", HealthIndicator.class);
            assertThat(health.health().getStatus()).isEqualTo(Status.UP);
        } finally {
            threads.shutdownNow();
        }
    }
}
