package dev.dlock.spring;

import static org.assertj.core.api.Assertions.assertThat;

import dev.dlock.Lease;
import dev.dlock.LockClient;
import dev.dlock.LockException;
import dev.dlock.testsupport.RedisProcess;
import java.nio.file.Files;
import java.nio.file.Path;
import java.time.Duration;
import java.time.LocalDate;
import java.util.List;
import java.util.Map;
import java.util.Optional;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.ConcurrentHashMap;
import org.junit.jupiter.api.Test;
import org.springframework.boot.SpringBootConfiguration;
import org.springframework.boot.WebApplicationType;
import org.springframework.boot.autoconfigure.EnableAutoConfiguration;
import org.springframework.boot.builder.SpringApplicationBuilder;
import org.springframework.context.ConfigurableApplicationContext;
import org.springframework.context.annotation.Import;
import reactor.core.publisher.Mono;

/**
 * The example of {@code docs/dlock-spring-boot-starter.md}, verbatim apart from the test scaffolding: the
 * properties of its application.yml and its {@code ShopService}, run on a real Redis server.
 */
class DocsExampleTest {
    /** A store that rejects writes with a fencing token older than the newest it has seen. */
    public static class Ledger {
        private final Map<String, Long> newest = new ConcurrentHashMap<>();

        public String write(String entry, long token) {
            newest.merge("ledger", token, (old, next) -> {
                if (next < old) {
                    throw new IllegalStateException("stale token " + next + " < " + old);
                }
                return next;
            });
            return entry + " @" + token;
        }
    }

    // ---- the example, as in the documentation

    public static class ShopService {
        private final Ledger ledger;

        public ShopService(Ledger ledger) {
            this.ledger = ledger;
        }

        /** One shipment per order at a time, across all instances; the token fences the ledger. */
        @WithLock(key = "'order:' + #orderId", waitTime = "2s")
        public String ship(long orderId, Lease lease) {
            return ledger.write("shipped " + orderId, lease.fencingToken());
        }

        /** Both stock records or neither (a multi-lock, taken in sorted order: no deadlock). */
        @WithLock(key = {"'stock:' + #from", "'stock:' + #to"})
        public String move(String from, String to, int quantity) {
            return "moved " + quantity + " from " + from + " to " + to;
        }

        /** One instance makes the report; the others skip it. */
        @WithLock(key = "'report:' + #day", waitTime = "0", ifNotAcquired = NotAcquired.SKIP)
        public Optional<String> dailyReport(LocalDate day) {
            return Optional.of("report " + day);
        }

        /** Answer at once rather than wait behind a shipment. */
        @WithLock(
                key = "'order:' + #orderId",
                waitTime = "200ms",
                ifNotAcquired = NotAcquired.FALLBACK,
                fallback = "busy")
        public String cancel(long orderId) {
            return "cancelled " + orderId;
        }

        String busy(long orderId, LockException why) {
            return "order " + orderId + " is busy, try again";
        }

        /** Does not block the caller; the lock is released when the future completes. */
        @WithLock(key = "'invoice:' + #orderId")
        public CompletableFuture<String> invoice(long orderId) {
            return CompletableFuture.supplyAsync(() -> "invoice " + orderId);
        }

        /** Many readers at once, no writer; the lock is held until the Mono completes. */
        @WithLock(key = "'catalog'", mode = LockMode.READ)
        public Mono<String> catalog() {
            return Mono.just("catalog");
        }
    }

    // ---- scaffolding

    @SpringBootConfiguration
    @EnableAutoConfiguration(
            excludeName = {StarterContractTest.REDIS_AUTO_CONFIGURATION, StarterContractTest.JDBC_AUTO_CONFIGURATION})
    @Import({ShopService.class, Ledger.class})
    static class ShopApplication {}

    @Test
    void theDocumentedExampleWorks() throws Exception {
        try (RedisProcess redis = RedisProcess.start()) {
            // A fresh server cannot be told from one that lost its state, so with the default settings it
            // holds each namespace's first grant back for 30 s; the example is not about restarts (the
            // hold-back is tested in RedisStarterTest and dlock-redis), so its URI opts out.
            String uri = "redis://127.0.0.1:" + redis.port() + "?unsafeGrantAfterRestart=true";
            Map<String, Object> applicationYml = Map.of(
                    "dlock.uri", uri,
                    "dlock.namespace", "shop",
                    "dlock.wait-time", "5s",
                    "dlock.local-queue-limit", "100",
                    "dlock.metrics.name-patterns", "order:*,stock:*");
            try (ConfigurableApplicationContext app = new SpringApplicationBuilder(ShopApplication.class)
                            .web(WebApplicationType.NONE)
                            .properties(applicationYml)
                            .run();
                    LockClient otherInstance =
                            LockClient.builder(uri).namespace("shop").build()) {
                ShopService shop = app.getBean(ShopService.class);
                assertThat(shop.ship(1, null)).matches("shipped 1 @\\d+");
                assertThat(shop.move("b", "a", 3)).isEqualTo("moved 3 from b to a");
                LocalDate today = LocalDate.of(2026, 11, 22);
                assertThat(shop.dailyReport(today)).contains("report 2026-11-22");
                assertThat(shop.invoice(1))
                        .succeedsWithin(Duration.ofSeconds(10))
                        .isEqualTo("invoice 1");
                assertThat(shop.catalog().block(Duration.ofSeconds(10))).isEqualTo("catalog");
                assertThat(shop.cancel(1)).isEqualTo("cancelled 1");

                try (Lease shipping = otherInstance.lock("order:1").acquire(Duration.ofSeconds(5));
                        Lease reporting =
                                otherInstance.lock("report:2026-11-22").acquire(Duration.ofSeconds(5))) {
                    assertThat(shop.cancel(1)).isEqualTo("order 1 is busy, try again");
                    assertThat(shop.dailyReport(today)).isEmpty();
                }
                assertThat(shop.ship(1, null)).matches("shipped 1 @\\d+");
            }
        }
    }

    @Test
    void theDocumentedExampleImportsResolve() throws Exception {
        String doc = Files.readString(Path.of("..", "docs", "dlock-spring-boot-starter.md"));
        int example = doc.indexOf("public class ShopService");
        String block = doc.substring(doc.lastIndexOf("```java", example), example);
        List<String> imports = block.lines()
                .filter(line -> line.startsWith("import "))
                .map(line -> line.substring("import ".length(), line.indexOf(';')))
                .toList();
        assertThat(imports).contains("dev.dlock.spring.WithLock", "dev.dlock.Lease", "dev.dlock.spring.NotAcquired");
        for (String type : imports) {
            assertThat(Class.forName(type)).as(type).isNotNull();
        }
    }
}
