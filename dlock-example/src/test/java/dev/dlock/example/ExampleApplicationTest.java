package dev.dlock.example;

import static org.assertj.core.api.Assertions.assertThat;

import dev.dlock.Lease;
import dev.dlock.LockClient;
import java.net.URI;
import java.net.http.HttpClient;
import java.net.http.HttpRequest;
import java.net.http.HttpResponse;
import java.time.Duration;
import java.util.concurrent.TimeUnit;
import java.util.function.BooleanSupplier;
import java.util.regex.Matcher;
import java.util.regex.Pattern;
import org.junit.jupiter.api.AfterAll;
import org.junit.jupiter.api.BeforeAll;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.TestInstance;
import org.springframework.boot.builder.SpringApplicationBuilder;
import org.springframework.boot.web.server.context.WebServerApplicationContext;
import org.springframework.context.ConfigurableApplicationContext;

/**
 * Two instances of the example application on one store (the in-memory store, shared within this JVM),
 * each with its own web server, driven over HTTP as users and load balancers would, plus a client of the
 * test holding locks to make them busy.
 */
@TestInstance(TestInstance.Lifecycle.PER_CLASS)
class ExampleApplicationTest {
    private final String store = "mem:example-" + System.nanoTime();
    private final HttpClient http = HttpClient.newHttpClient();
    private ConfigurableApplicationContext first;
    private ConfigurableApplicationContext second;
    private LockClient other;

    @BeforeAll
    void start() {
        first = instance();
        second = instance();
        other = LockClient.builder(store).namespace("shop").build();
    }

    private ConfigurableApplicationContext instance() {
        // As command-line arguments, which win over application.yml (builder properties would not).
        return new SpringApplicationBuilder(ExampleApplication.class)
                .run(
                        "--dlock.uri=" + store,
                        "--server.port=0",
                        "--server.address=127.0.0.1",
                        "--example.report-interval=50ms",
                        "--spring.main.banner-mode=off");
    }

    @AfterAll
    void stop() {
        other.close();
        second.close();
        first.close();
    }

    private HttpResponse<String> call(ConfigurableApplicationContext app, String method, String path) throws Exception {
        int port = ((WebServerApplicationContext) app).getWebServer().getPort();
        return http.send(
                HttpRequest.newBuilder(URI.create("http://127.0.0.1:" + port + path))
                        .method(method, HttpRequest.BodyPublishers.noBody())
                        .timeout(Duration.ofSeconds(20))
                        .build(),
                HttpResponse.BodyHandlers.ofString());
    }

    private static long token(HttpResponse<String> response) {
        Matcher token = Pattern.compile("\\(token (\\d+)\\)").matcher(response.body());
        assertThat(token.find()).as(response.body()).isTrue();
        return Long.parseLong(token.group(1));
    }

    @Test
    void shippingIsLockedPerOrderAcrossInstances() throws Exception {
        HttpResponse<String> one = call(first, "POST", "/orders/1/ship");
        HttpResponse<String> two = call(second, "POST", "/orders/1/ship");
        assertThat(one.statusCode()).isEqualTo(200);
        assertThat(two.statusCode()).isEqualTo(200);
        assertThat(token(two)).isGreaterThan(token(one));

        try (Lease held = other.lock("order:2").acquire(Duration.ofSeconds(5))) {
            HttpResponse<String> busy = call(first, "POST", "/orders/2/ship");
            assertThat(busy.statusCode()).isEqualTo(409);
            assertThat(busy.body()).isEqualTo("order 2 is being shipped, try again");
            assertThat(call(first, "POST", "/orders/3/ship").statusCode()).isEqualTo(200);
        }
        assertThat(call(second, "POST", "/orders/2/ship").statusCode()).isEqualTo(200);
    }

    @Test
    void theReactiveEndpointAnswersUnderTheSharedLockAndWaitsForAWriter() throws Exception {
        assertThat(call(first, "GET", "/catalog").body()).isEqualTo("catalog");
        HttpResponse<String> afterWriter;
        try (Lease writer = other.readWriteLock("catalog").writeLock().acquire(Duration.ofSeconds(5))) {
            var pending = http.sendAsync(
                    HttpRequest.newBuilder(URI.create("http://127.0.0.1:"
                                    + ((WebServerApplicationContext) second)
                                            .getWebServer()
                                            .getPort()
                                    + "/catalog"))
                            .timeout(Duration.ofSeconds(20))
                            .build(),
                    HttpResponse.BodyHandlers.ofString());
            Thread.sleep(300);
            assertThat(pending).as("waits for the writer").isNotDone();
            writer.close();
            afterWriter = pending.get(10, TimeUnit.SECONDS);
        }
        assertThat(afterWriter.statusCode()).isEqualTo(200);
        assertThat(afterWriter.body()).isEqualTo("catalog");
    }

    @Test
    void theScheduledReportIsSkippedWhileAnotherHolderHasIt() throws Exception {
        Shop a = first.getBean(Shop.class);
        Shop b = second.getBean(Shop.class);
        assertThat(eventually(() -> a.reportsMade() + b.reportsMade() > 0)).isTrue();
        try (Lease held = other.lock("report:nightly").acquire(Duration.ofSeconds(5))) {
            int before = a.reportsMade() + b.reportsMade();
            Thread.sleep(500);
            assertThat(a.reportsMade() + b.reportsMade())
                    .as("neither instance runs the report while it is held elsewhere")
                    .isEqualTo(before);
        }
        int released = a.reportsMade() + b.reportsMade();
        assertThat(eventually(() -> a.reportsMade() + b.reportsMade() > released))
                .isTrue();
    }

    @Test
    void theActuatorShowsTheStoreAndTheLeases() throws Exception {
        HttpResponse<String> health = call(first, "GET", "/actuator/health");
        assertThat(health.statusCode()).isEqualTo(200);
        assertThat(health.body()).contains("\"dlock\"").contains("\"status\":\"UP\"");
        HttpResponse<String> leases = call(second, "GET", "/actuator/dlock");
        assertThat(leases.statusCode()).isEqualTo(200);
        assertThat(leases.body()).contains("\"count\"");
    }

    private static boolean eventually(BooleanSupplier condition) throws InterruptedException {
        long deadline = System.nanoTime() + TimeUnit.SECONDS.toNanos(10);
        while (System.nanoTime() < deadline) {
            if (condition.getAsBoolean()) {
                return true;
            }
            Thread.sleep(20);
        }
        return false;
    }
}
