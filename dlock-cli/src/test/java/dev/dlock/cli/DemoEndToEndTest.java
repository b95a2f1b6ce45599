package dev.dlock.cli;

import static org.assertj.core.api.Assertions.assertThat;

import java.nio.file.Path;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;
import org.junit.jupiter.api.AfterEach;
import org.junit.jupiter.api.BeforeEach;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;

/** {@code dlock demo} as a real process with real worker processes, small enough for a test. */
class DemoEndToEndTest {
    private static final int STOCK = 20;

    @TempDir
    Path dir;

    CliProcesses cli;

    @BeforeEach
    void setUp() throws Exception {
        cli = new CliProcesses(dir);
    }

    @AfterEach
    void tearDown() {
        cli.close();
    }

    /** The table rows by strategy: sold, oversold. */
    private static Map<String, int[]> table(String out) {
        Map<String, int[]> rows = new LinkedHashMap<>();
        List<String> lines = out.lines().toList();
        int header = lines.indexOf(lines.stream()
                .filter(line -> line.startsWith("strategy"))
                .findFirst()
                .orElseThrow(() -> new AssertionError("no table in:\n" + out)));
        assertThat(lines.get(header)).matches("strategy\\s+sold\\s+oversold\\s+orders/s\\s+p50\\s+p99");
        for (String line : lines.subList(header + 1, lines.size())) {
            if (line.isBlank()) {
                break;
            }
            String[] cells = line.trim().split("\\s{2,}");
            assertThat(cells).as(line).hasSize(6);
            assertThat(cells[4]).matches("\\d+\\.\\dms");
            assertThat(cells[5]).matches("\\d+\\.\\dms");
            rows.put(cells[0], new int[] {Integer.parseInt(cells[1]), Integer.parseInt(cells[2])});
        }
        return rows;
    }

    @Test
    void embeddedDemoSellsExactlyTheStockWithEveryLock() throws Exception {
        CliProcesses.Result result = cli.start(
                        "demo",
                        "--stock",
                        Integer.toString(STOCK),
                        "--buyers",
                        "200",
                        "--workers",
                        "2",
                        "--threads",
                        "4")
                .await(240);
        assertThat(result.code()).as(result.err()).isZero();
        Map<String, int[]> rows = table(result.out());
        assertThat(rows.keySet())
                .containsExactly("none", "optimistic", "pessimistic", "dlock zookeeper", "dlock jdbc:h2");
        for (String locking : List.of("optimistic", "pessimistic", "dlock zookeeper", "dlock jdbc:h2")) {
            assertThat(rows.get(locking)).as(locking).containsExactly(STOCK, 0);
        }
        int[] none = rows.get("none");
        assertThat(none[0]).as("without a lock at least the stock is sold").isGreaterThanOrEqualTo(STOCK);
        assertThat(none[1]).isEqualTo(none[0] - STOCK);
        assertThat(result.out()).contains("flash sale: stock 20, 200 buyers in 2 processes x 4 threads");
        assertThat(cli.serverProcesses())
                .as("the demo does not start the local server")
                .isEmpty();
    }

    @Test
    void demoOnRealStores() throws Exception {
        CliProcesses.Result result = cli.start(
                        "demo",
                        "--stock",
                        Integer.toString(STOCK),
                        "--buyers",
                        "200",
                        "--workers",
                        "2",
                        "--threads",
                        "4",
                        "--strategy",
                        "pessimistic,dlock",
                        "--backend",
                        "redis://127.0.0.1:6379",
                        "--backend",
                        "jdbc:postgresql://127.0.0.1:5432/test?user=postgres")
                .await(240);
        assertThat(result.code()).as(result.err()).isZero();
        assertThat(result.out()).contains("database: jdbc:postgresql://127.0.0.1:5432/test?user=postgres");
        Map<String, int[]> rows = table(result.out());
        assertThat(rows.keySet()).containsExactly("pessimistic", "dlock redis", "dlock jdbc:postgresql");
        rows.forEach((strategy, row) -> assertThat(row).as(strategy).containsExactly(STOCK, 0));
    }
}
