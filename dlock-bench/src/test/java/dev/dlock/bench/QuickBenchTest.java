package dev.dlock.bench;

import static org.assertj.core.api.Assertions.assertThat;

import java.io.ByteArrayOutputStream;
import java.io.PrintStream;
import java.nio.charset.StandardCharsets;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.ArrayList;
import java.util.List;
import java.util.regex.Matcher;
import java.util.regex.Pattern;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.Timeout;

/**
 * The smoke test of the benchmark: {@code --quick} runs every cell of every system briefly against the real
 * local servers (Redis, PostgreSQL, MariaDB; ZooKeeper in-process) and writes the three result files. It
 * asserts that the run completes, that every system that can run here produced a row for each of its
 * scenarios, and that no system let two holders in at once. It asserts nothing about speed.
 */
class QuickBenchTest {
    private static final Pattern ROW = Pattern.compile("\\{\"scenario\": \"([a-z]+)\", \"system\": \"([a-z-]+)\","
            + " \"backend\": \"([a-z]+)\", \"clients\": \\d+, \"threads\": \\d+, \"seconds\": [0-9.]+,"
            + " \"ops_per_s\": [0-9.E]+, \"p50_us\": [0-9.E]+, \"p99_us\": [0-9.E]+, \"violations\": (\\d+),"
            + " \"grants_per_client\": \\[[0-9, ]*\\], \"min_share\": [0-9.E]+, \"max_share\": [0-9.E]+}");

    @Test
    @Timeout(180)
    void quickRunCompletesWithoutViolations() throws Exception {
        Path out = Path.of("target", "bench-smoke");
        Options options = Main.fromArgs("--quick", "--out", out.toString());
        ByteArrayOutputStream log = new ByteArrayOutputStream();
        BenchRun.Outcome outcome;
        try (PrintStream tee = new PrintStream(new TeeStream(log, System.out), true, StandardCharsets.UTF_8)) {
            outcome = BenchRun.run(options, tee);
        }
        Main.write(outcome, options);
        String progress = log.toString(StandardCharsets.UTF_8);

        // Only a dlock backend whose module is not built may be missing; a server that is down fails.
        assertThat(outcome.skipped())
                .as("skipped systems (start the servers with scripts/test.sh)\n%s", progress)
                .allMatch(s -> s.contains("no dlock backend module"));
        assertThat(outcome.failures()).as("failed cells\n%s", progress).isEmpty();

        String json = Files.readString(out.resolve("results.json"));
        List<String> cells = new ArrayList<>();
        Matcher m = ROW.matcher(json);
        while (m.find()) {
            cells.add(m.group(1) + " " + m.group(2) + "@" + m.group(3));
            assertThat(Long.parseLong(m.group(4)))
                    .as("violations of %s %s@%s", m.group(1), m.group(2), m.group(3))
                    .isZero();
        }
        assertThat(json.strip().split("\n")).hasSize(cells.size() + 2); // every row matched, plus [ and ]
        for (LockSystem system : Catalog.all()) {
            if (outcome.skipped().stream().anyMatch(s -> s.startsWith(system.id() + ":"))) {
                continue;
            }
            for (Scenario scenario : Scenario.values()) {
                if (system.supports(scenario)) {
                    assertThat(cells).contains(scenario.label() + " " + system.id());
                }
            }
        }
        assertThat(cells)
                .contains("contended dlock@mem", "contended redisson-lock@redis", "contended curator@zookeeper");
        assertThat(Files.readString(out.resolve("results.md"))).contains("## dlock's ratio to each peer");
        byte[] png = Files.readAllBytes(out.resolve("chart.png"));
        assertThat(png).hasSizeGreaterThan(1000);
        assertThat(new String(png, 1, 3, StandardCharsets.US_ASCII)).isEqualTo("PNG");
    }

    /** Keeps the progress for failure messages and shows it in the test output as it happens. */
    private static final class TeeStream extends java.io.OutputStream {
        private final java.io.OutputStream first;
        private final java.io.OutputStream second;

        TeeStream(java.io.OutputStream first, java.io.OutputStream second) {
            this.first = first;
            this.second = second;
        }

        @Override
        public void write(int b) throws java.io.IOException {
            first.write(b);
            second.write(b);
        }

        @Override
        public void write(byte[] b, int off, int len) throws java.io.IOException {
            first.write(b, off, len);
            second.write(b, off, len);
        }
    }
}
