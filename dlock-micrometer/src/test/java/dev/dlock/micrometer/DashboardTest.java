package dev.dlock.micrometer;

import static org.assertj.core.api.Assertions.assertThat;

import com.fasterxml.jackson.databind.JsonNode;
import com.fasterxml.jackson.databind.ObjectMapper;
import io.micrometer.prometheusmetrics.PrometheusConfig;
import io.micrometer.prometheusmetrics.PrometheusMeterRegistry;
import java.nio.file.Path;
import java.util.ArrayList;
import java.util.LinkedHashSet;
import java.util.List;
import java.util.Set;
import java.util.regex.Matcher;
import java.util.regex.Pattern;
import org.junit.jupiter.api.Test;

/**
 * Every query of the shipped Grafana dashboard ({@code docs/grafana/dlock-dashboard.json}) names series that
 * exist: real lock traffic goes through {@link MicrometerLockListener} into a Prometheus registry, and each
 * {@code dlock_*} series and each fixed label value the queries use must be in its scrape.
 */
class DashboardTest {
    private static final Path DASHBOARD = Path.of("..", "docs", "grafana", "dlock-dashboard.json");
    private static final Pattern SERIES = Pattern.compile("\\bdlock_[a-z_]+\\b");
    private static final Pattern MATCHER = Pattern.compile("(\\w+)=~?\"([^\"$]+)\"");

    @Test
    void everyQueryNamesSeriesThatExistAfterRealTraffic() throws Exception {
        PrometheusMeterRegistry registry = new PrometheusMeterRegistry(PrometheusConfig.DEFAULT);
        MicrometerLockListener metrics = MicrometerLockListener.builder(registry)
                .namePatterns(List.of("job:*", "order:*"))
                .build();
        Traffic.run(metrics, () -> {});
        String scrape = registry.scrape();

        JsonNode dashboard = new ObjectMapper().readTree(DASHBOARD.toFile());
        List<String> queries = new ArrayList<>();
        for (JsonNode panel : dashboard.path("panels")) {
            assertThat(panel.path("targets").size())
                    .as("panel %s has queries", panel.path("title"))
                    .isPositive();
            for (JsonNode target : panel.path("targets")) {
                queries.add(target.path("expr").asText());
            }
        }
        for (JsonNode variable : dashboard.path("templating").path("list")) {
            if (variable.path("type").asText().equals("query")) {
                queries.add(variable.path("definition").asText());
            }
        }
        assertThat(queries).hasSizeGreaterThanOrEqualTo(8);

        Set<String> seriesSeen = new LinkedHashSet<>();
        for (String query : queries) {
            List<String> series = find(SERIES, query);
            assertThat(series).as("query names a dlock series: %s", query).isNotEmpty();
            for (String name : series) {
                assertThat(scrape)
                        .as("series %s of query %s is scraped", name, query)
                        .containsPattern("(?m)^" + name + "[{ ]");
                seriesSeen.add(name);
            }
            Matcher matcher = MATCHER.matcher(query);
            while (matcher.find()) {
                for (String value : matcher.group(2).split("\\|")) {
                    assertThat(series)
                            .as("label %s=\"%s\" of query %s exists on its series", matcher.group(1), value, query)
                            .anyMatch(name -> Pattern.compile("(?m)^" + name + "\\{[^}]*" + matcher.group(1) + "=\""
                                            + Pattern.quote(value) + "\"")
                                    .matcher(scrape)
                                    .find());
                }
            }
        }
        assertThat(seriesSeen)
                .as("the dashboard covers every meter")
                .contains(
                        "dlock_acquire_seconds_bucket",
                        "dlock_held_seconds_bucket",
                        "dlock_leases_lost_total",
                        "dlock_queue_local",
                        "dlock_leases_active");
    }

    private static List<String> find(Pattern pattern, String text) {
        List<String> found = new ArrayList<>();
        Matcher m = pattern.matcher(text);
        while (m.find()) {
            found.add(m.group());
        }
        return found;
    }
}
