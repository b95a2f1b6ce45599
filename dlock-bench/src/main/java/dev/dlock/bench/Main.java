package dev.dlock.bench;

import java.io.IOException;
import java.io.PrintStream;
import java.nio.charset.StandardCharsets;
import java.nio.file.Files;
import java.nio.file.Path;

/**
 * The side-by-side benchmark: dlock against Redisson, Spring Integration, Curator and the raw floor of
 * each store, on the same servers and the same machine, in one run.
 *
 * <h2>Running it</h2>
 *
 * <pre>{@code
 * scripts/bench.sh                      # everything: about 25 minutes
 * scripts/bench.sh --quick              # every cell briefly, under 2 minutes (the smoke test does this)
 * scripts/bench.sh --scenario contended --backend redis
 * scripts/bench.sh --system dlock --system redisson-lock --scenario uncontended,distinct
 * scripts/bench.sh --scenario held --held-leases 10000 --held-seconds 60
 * }</pre>
 *
 * <p>{@code scripts/bench.sh} builds the module (and what it depends on) with Maven and runs this class
 * with {@code -Djava.awt.headless=true}; any arguments are passed through ({@code --help} lists them).
 * It expects Redis at 127.0.0.1:6379, PostgreSQL at 127.0.0.1:5432 (database {@code test}, user {@code
 * postgres}, trust) and MariaDB at 127.0.0.1:3306 (user {@code root}, no password, database {@code test});
 * {@code scripts/test.sh} installs and starts them. ZooKeeper is started inside the bench. A system whose
 * server does not answer, or whose dlock backend module is not on the class path, is skipped and listed.
 *
 * <h2>Systems</h2>
 *
 * <p>dlock on Redis, ZooKeeper, PostgreSQL, MariaDB and in memory; Redisson {@code RLock} and {@code
 * RFairLock}; Spring Integration {@code RedisLockRegistry} in spin and pub/sub modes and {@code
 * JdbcLockRegistry} on PostgreSQL; Curator {@code InterProcessMutex}; and {@code raw}, two plain round
 * trips per cycle on the same kind of connection (the physical floor). Every library runs with its
 * default settings.
 *
 * <h2>Scenarios</h2>
 *
 * <p>{@code uncontended} (1 client x 1 thread, its own name), {@code distinct} (1 client x 8 threads, each
 * its own name), {@code contended} (4 clients x 4 threads, one name), {@code handoff} (8 clients queue on
 * one name; latency from a release to the next holder's entry) and {@code held} (one client holds 10,000
 * leases for 60 s with renewal on: heap, threads, store commands per second). A client is one instance of
 * the library with its own connections. Each lock scenario loops lock, critical section, unlock; the
 * critical section increments a plain shared counter and checks that nobody else is inside.
 *
 * <h2>Output</h2>
 *
 * <p>In the output directory ({@code dlock-bench/target/bench} when run by the script): {@code
 * results.json}, an array of {@code {scenario, system, backend, clients, threads, seconds, ops_per_s,
 * p50_us, p99_us, violations}}; {@code results.md}, the environment, all results, dlock's ratio to each
 * peer per scenario and the targets; and {@code chart.png}, ops/s per scenario and system. The exit
 * status is 1 when a cell failed or a violation was seen.
 */
public final class Main {
    private Main() {}

    /**
     * Runs the bench.
     *
     * @param args see {@link Options#USAGE}, printed by {@code --help}
     */
    public static void main(String[] args) {
        System.setProperty("java.awt.headless", "true");
        int status;
        try {
            status = run(args, System.out);
        } catch (IllegalArgumentException e) {
            System.err.println(e.getMessage());
            status = 2;
        } catch (Exception | Error e) {
            e.printStackTrace();
            status = 1;
        }
        System.exit(status);
    }

    /** Parses the arguments, as {@code main} does, without running anything. */
    static Options fromArgs(String... args) {
        return Options.parse(args);
    }

    /**
     * Runs the bench and writes the results.
     *
     * @return 0 when every cell ran without violations, 1 otherwise
     */
    static int run(String[] args, PrintStream log) throws Exception {
        for (String arg : args) {
            if (arg.equals("--help") || arg.equals("-h")) {
                log.println(Options.USAGE);
                return 0;
            }
        }
        Options options = fromArgs(args);
        if (options.list()) {
            for (LockSystem s : Catalog.all()) {
                log.println(s.id());
            }
            for (Scenario s : Scenario.values()) {
                log.println(s.label() + ": " + s.description);
            }
            return 0;
        }
        BenchRun.Outcome outcome = BenchRun.run(options, log);
        write(outcome, options);
        log.println("[bench] wrote " + options.out().resolve("results.json") + ", results.md and chart.png");
        boolean violated = outcome.rows().stream().anyMatch(r -> r.violations() > 0);
        return outcome.failures().isEmpty() && !violated ? 0 : 1;
    }

    static void write(BenchRun.Outcome outcome, Options options) throws IOException {
        Path out = options.out();
        Files.createDirectories(out);
        Files.writeString(out.resolve("results.json"), Reports.json(outcome.rows()), StandardCharsets.UTF_8);
        Files.writeString(out.resolve("results.md"), Reports.markdown(outcome, options), StandardCharsets.UTF_8);
        ChartWriter.write(outcome.rows(), out.resolve("chart.png"));
    }
}
