package dev.dlock.spring;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;

import dev.dlock.LockClient;
import dev.dlock.testsupport.RedisProcess;
import java.net.URI;
import java.net.http.HttpClient;
import java.net.http.HttpRequest;
import java.net.http.HttpResponse;
import java.util.ArrayList;
import java.util.HashMap;
import java.util.List;
import java.util.Map;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.extension.ExtendWith;
import org.springframework.boot.WebApplicationType;
import org.springframework.boot.builder.SpringApplicationBuilder;
import org.springframework.boot.test.system.CapturedOutput;
import org.springframework.boot.test.system.OutputCaptureExtension;
import org.springframework.context.ConfigurableApplicationContext;

/**
 * A password in {@code dlock.uri} never shows: a web application on a Redis server that requires a sentinel
 * password, with the actuator's health and {@code dlock} endpoints read while a lock is held, its log
 * output, the beans' {@code toString()}, and the failure report of a start with a wrong password and of an
 * unknown scheme.
 */
@ExtendWith(OutputCaptureExtension.class)
class StarterSecretsTest {
    private static final String SENTINEL = "Sentinel-Pw-4711";
    private static final String WRONG = "Wrong-Sentinel-0815";

    private static ConfigurableApplicationContext start(String uri, WebApplicationType type) {
        Map<String, Object> properties = new HashMap<>();
        properties.put("dlock.uri", uri);
        properties.put("server.port", "0");
        properties.put("management.endpoints.web.exposure.include", "health,dlock");
        properties.put("management.endpoint.health.show-details", "always");
        properties.put("dlock.operation-timeout", "2s");
        properties.put("spring.main.banner-mode", "off");
        properties.put(
                "spring.autoconfigure.exclude",
                StarterContractTest.REDIS_AUTO_CONFIGURATION + "," + StarterContractTest.JDBC_AUTO_CONFIGURATION);
        return new SpringApplicationBuilder(TestApplication.class)
                .web(type)
                .properties(properties)
                .run();
    }

    @Test
    void passwordsInTheUriNeverShow(CapturedOutput output) throws Exception {
        List<String> seen = new ArrayList<>();
        try (RedisProcess redis = RedisProcess.start("--requirepass", SENTINEL)) {
            String base = "@127.0.0.1:" + redis.port();
            try (ConfigurableApplicationContext app =
                    // a fresh server: opt out of its first-grant hold-back (the case is about secrets)
                    start(
                            "redis://:" + SENTINEL + base + "?unsafeGrantAfterRestart=true",
                            WebApplicationType.SERVLET)) {
                HttpClient http = HttpClient.newHttpClient();
                String url = "http://127.0.0.1:" + app.getEnvironment().getProperty("local.server.port");
                LockedService service = app.getBean(LockedService.class);
                service.tokenWhile(7, null, () -> {
                    for (String path : List.of("/actuator/health", "/actuator/dlock", "/actuator/dlock/order:7")) {
                        try {
                            HttpResponse<String> response = http.send(
                                    HttpRequest.newBuilder(URI.create(url + path))
                                            .build(),
                                    HttpResponse.BodyHandlers.ofString());
                            assertThat(response.statusCode()).as(path).isEqualTo(200);
                            seen.add(response.body());
                        } catch (Exception e) {
                            throw new AssertionError(e);
                        }
                    }
                });
                assertThat(seen.get(0)).contains("redis://:****" + base);
                assertThat(seen.get(2)).contains("order:7");
                seen.add(app.getBean(LockClient.class).toString());
                seen.add(app.getBean(DlockStore.class).description());
            }
            assertThatThrownBy(() -> start("redis://:" + WRONG + base, WebApplicationType.NONE)
                            .close())
                    .isNotNull();
        }
        assertThatThrownBy(
                        () -> start("nosuch://admin:" + SENTINEL + "@host/?password=" + WRONG, WebApplicationType.NONE)
                                .close())
                .isNotNull();
        assertThat(output.getAll()).contains("APPLICATION FAILED TO START");
        seen.add(output.getAll());
        for (String text : seen) {
            assertThat(text).doesNotContain(SENTINEL).doesNotContain(WRONG);
        }
    }
}
