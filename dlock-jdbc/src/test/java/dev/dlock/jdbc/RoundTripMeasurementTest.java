package dev.dlock.jdbc;

import static org.assertj.core.api.Assertions.assertThat;

import com.zaxxer.hikari.HikariConfig;
import com.zaxxer.hikari.HikariDataSource;
import dev.dlock.LockClient;
import java.io.IOException;
import java.nio.file.Files;
import java.nio.file.Path;
import java.time.Duration;
import java.util.ArrayList;
import java.util.List;
import java.util.Locale;
import java.util.concurrent.TimeUnit;
import java.util.function.Function;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.Timeout;

/**
 * Measures, per database, the round trips of one uncontended acquire+release and how many such cycles
 * one thread completes per second, and prints them (also to {@code target/jdbc-measurements.md}). Round
 * trips are counted at the JDBC boundary: statement executions and commits, plus {@code setAutoCommit}
 * switches on MariaDB, whose driver sends them. Only the round-trip counts of the single-statement paths
 * are asserted; the timings are figures for the docs, not assertions. Each kind of lock runs 200 ms in the
 * test suite (the counts are exact after a few cycles); the docs' figures come from a second per kind:
 * {@code -Ddlock.jdbc.measureMillis=1000}.
 *
 * <p>Run alone: {@code mvn -B -pl dlock-jdbc -am verify -Dtest=RoundTripMeasurementTest
 * -Dsurefire.failIfNoSpecifiedTests=false -Ddlock.jdbc.measureMillis=1000}.
 */
@Timeout(value = 120, unit = TimeUnit.SECONDS)
class RoundTripMeasurementTest {
    private static final Duration RUN = Duration.ofMillis(Long.getLong("dlock.jdbc.measureMillis", 200));
    /** Cycles before the measurement: enough to warm up for the docs' figures, a few for the counts. */
    private static final int WARM_UP = RUN.toMillis() >= 1000 ? 100 : 10;

    private record Row(String database, String kind, double roundTrips, double cyclesPerSecond) {}

    @Test
    void measureEveryDatabase() throws Exception {
        List<Row> rows = new ArrayList<>();
        String pg = TestDatabases.postgres(TestDatabases.PG_PORT);
        String maria = TestDatabases.mariadb(TestDatabases.MARIADB_PORT);
        String h2 = "jdbc:h2:mem:measure;DB_CLOSE_DELAY=-1";
        for (boolean advisory : new boolean[] {false, true}) {
            rows.addAll(measure("PostgreSQL 15", pg, Dialect.POSTGRESQL, advisory, false));
            rows.addAll(measure("MariaDB 10.11", maria, Dialect.MYSQL, advisory, true));
        }
        rows.addAll(measure("H2 2.3 (in-process)", h2, Dialect.H2, false, false));
        StringBuilder out = new StringBuilder(
                "| database | lock | round trips per acquire+release | cycles/s (1 thread) |\n|---|---|---|---|\n");
        for (Row r : rows) {
            out.append(String.format(
                    Locale.ROOT,
                    "| %s | %s | %.1f | %.0f |%n",
                    r.database(),
                    r.kind(),
                    r.roundTrips(),
                    r.cyclesPerSecond()));
        }
        System.out.println(out);
        writeReport(out.toString());
        for (Row r : rows) {
            if (r.kind().equals("lock") && !r.database().startsWith("H2")) {
                assertThat(r.roundTrips()).as(r.database()).isEqualTo(2.0);
            }
        }
    }

    private static void writeReport(String text) throws IOException {
        Path target = Path.of("target");
        if (Files.isDirectory(target)) {
            Files.writeString(target.resolve("jdbc-measurements.md"), text);
        }
    }

    private static List<Row> measure(String label, String url, Dialect dialect, boolean advisory, boolean mariaDb)
            throws Exception {
        String prefix = TestDatabases.prefix("measure");
        TestDatabases.createTables(url, dialect, prefix);
        HikariConfig config = new HikariConfig();
        config.setJdbcUrl(url);
        config.setMaximumPoolSize(4);
        List<Row> rows = new ArrayList<>();
        try (HikariDataSource pool = new HikariDataSource(config)) {
            CountingDataSource counting = new CountingDataSource(pool);
            try (LockClient client = LockClient.builder(JdbcBackends.builder(counting.dataSource())
                            .tablePrefix(prefix)
                            .advisory(advisory)
                            .build())
                    .build()) {
                String suffix = advisory ? " (advisory)" : "";
                rows.add(run(
                        label,
                        "lock" + suffix,
                        client,
                        c -> () -> c.lock("m").acquire(Duration.ofSeconds(5)),
                        counting,
                        mariaDb));
                if (!advisory) {
                    rows.add(run(
                            label,
                            "fairLock",
                            client,
                            c -> () -> c.fairLock("m").acquire(Duration.ofSeconds(5)),
                            counting,
                            mariaDb));
                    rows.add(run(
                            label,
                            "writeLock",
                            client,
                            c -> () -> c.readWriteLock("m").writeLock().acquire(Duration.ofSeconds(5)),
                            counting,
                            mariaDb));
                    rows.add(run(
                            label,
                            "semaphore(3)",
                            client,
                            c -> () -> c.semaphore("m", 3).acquire(Duration.ofSeconds(5)),
                            counting,
                            mariaDb));
                }
            }
        } finally {
            TestDatabases.dropTables(url, prefix);
        }
        return rows;
    }

    private static Row run(
            String label,
            String kind,
            LockClient client,
            Function<LockClient, java.util.function.Supplier<dev.dlock.Lease>> lockOf,
            CountingDataSource counting,
            boolean countAutoCommit) {
        java.util.function.Supplier<dev.dlock.Lease> acquire = lockOf.apply(client);
        for (int i = 0; i < WARM_UP; i++) {
            acquire.get().close();
        }
        counting.clear();
        long start = System.nanoTime();
        long end = start + RUN.toNanos();
        int cycles = 0;
        while (System.nanoTime() - end < 0) {
            acquire.get().close();
            cycles++;
        }
        double seconds = (System.nanoTime() - start) / 1e9;
        int trips = counting.sent().size() + (countAutoCommit ? counting.autoCommitSwitches.get() : 0);
        return new Row(label, kind, (double) trips / cycles, cycles / seconds);
    }
}
