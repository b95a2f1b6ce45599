package dev.dlock.bench;

import static org.assertj.core.api.Assertions.assertThat;

import java.util.LinkedHashMap;
import java.util.List;
import org.junit.jupiter.api.Test;

class ReportsTest {
    private static final List<Row> ROWS = List.of(
            new Row("contended", "dlock", "redis", 4, 4, 9, 6000, 2000, 9000, 0, List.of(10L, 20L, 30L, 20L)),
            new Row("contended", "redisson-lock", "redis", 4, 4, 9, 1000, 10000, 90000, 0, List.of(40L, 0L, 0L, 0L)),
            new Row("contended", "spring-redis-spin", "redis", 4, 4, 9, 3000, 3000, 30000, 0, List.of()),
            new Row("uncontended", "raw", "redis", 1, 1, 9, 10000, 95.5, 150.25, 0, List.of(7L)),
            new Row("contended", "dlock", "mariadb", 4, 4, 9, 900, 3000, 120_000, 0, List.of(25L, 25L, 25L, 25L)),
            new Row("contended", "dlock", "mem", 1, 16, 9, 30_000, 10, 90, 0, List.of(5L)));

    @Test
    void jsonHasTheFieldsOfEveryRowWithFairness() {
        String json = Reports.json(ROWS);
        assertThat(json).startsWith("[\n").endsWith("]\n");
        assertThat(json)
                .contains("{\"scenario\": \"contended\", \"system\": \"dlock\", \"backend\": \"redis\", \"clients\": 4,"
                        + " \"threads\": 4, \"seconds\": 9, \"ops_per_s\": 6000, \"p50_us\": 2000, \"p99_us\": 9000,"
                        + " \"violations\": 0, \"grants_per_client\": [10, 20, 30, 20], \"min_share\": 0.5,"
                        + " \"max_share\": 1.5},")
                .contains("\"grants_per_client\": [40, 0, 0, 0], \"min_share\": 0, \"max_share\": 4}")
                .contains("\"p50_us\": 95.5, \"p99_us\": 150.25");
        assertThat(json.split("\"scenario\"")).hasSize(ROWS.size() + 1);
    }

    @Test
    void markdownGivesRatiosAndJudgesTargets() {
        BenchRun.Outcome outcome = new BenchRun.Outcome(ROWS, List.of(), List.of(), List.of(), new LinkedHashMap<>());
        String md = Reports.markdown(outcome, Main.fromArgs());
        assertThat(md).contains("| contended | redis | redisson-lock | 6,000.0 | 1,000.0 | 6.00x | 0.10x |");
        assertThat(md).contains("| contended | redis | spring-redis-spin | 6,000.0 | 3,000.0 | 2.00x | 0.30x |");
        assertThat(md).contains("| redis contended: dlock >= 5.00x redisson-lock | 6.00x | yes |");
        assertThat(md).contains("| redis contended: dlock >= 3.00x spring-redis-spin | 2.00x | **no** |");
        assertThat(md).contains("| redis contended: dlock p99 <= 0.5x spring-redis-spin's | 0.30x | yes |");
        assertThat(md)
                .contains("| redis contended: every dlock client's share within [0.5, 2]x of fair | 0.50-1.50 | yes |");
        assertThat(md).contains("| mariadb contended: dlock p99 <= 100 ms | 120.0 ms | **no** |");
        assertThat(md).contains("| mem contended: dlock >= 27,000 cycles/s | 30,000 | yes |");
        assertThat(md).contains("| redis uncontended: dlock >= 0.90x raw | not measured | - |");
        assertThat(md).contains("| zookeeper contended: dlock >= 4.00x curator | not measured | - |");
        assertThat(md).contains("| 0 | 0.50-1.50 |").contains("| 0 | 0.00-4.00 |");
    }

    @Test
    void percentilesAreNearestRank() {
        Latencies l = new Latencies();
        for (int i = 1; i <= 1000; i++) {
            l.add(i * 1000L); // 1..1000 us, out of order does not matter
        }
        assertThat(l.percentileMicros(50)).isEqualTo(500.0);
        assertThat(l.percentileMicros(99)).isEqualTo(990.0);
        assertThat(new Latencies().percentileMicros(99)).isZero();
    }
}
