package dev.dlock.cli;

import dev.dlock.DistributedLock;
import dev.dlock.LockClient;
import java.io.BufferedReader;
import java.io.InputStreamReader;
import java.nio.charset.StandardCharsets;
import java.sql.Connection;
import java.sql.DriverManager;
import java.sql.SQLException;
import java.time.Duration;
import java.util.ArrayList;
import java.util.List;
import java.util.StringJoiner;
import java.util.concurrent.ConcurrentLinkedQueue;
import java.util.concurrent.ExecutorService;
import java.util.concurrent.Executors;
import java.util.concurrent.Future;
import java.util.concurrent.atomic.AtomicInteger;
import java.util.concurrent.atomic.AtomicLongArray;
import picocli.CommandLine.Command;
import picocli.CommandLine.Option;

/**
 * Hidden {@code dlock worker}: one of the demo's buyer processes, kept for all strategies of a demo run.
 * Opens one database connection per thread and prints {@code READY}; then, per round, reads {@code
 * PREPARE<TAB>strategy<TAB>first buyer<TAB>buyers[<TAB>lock URI]} (connects the lock client for {@code
 * DLOCK}, prints {@code READY}), waits for {@code GO}, runs the round's buyers on its threads and prints
 * {@code RESULT <bought> <turned away> <errors> <latencies in µs, comma-separated>}, preceded by {@code
 * ERROR <message>} for its first few errors. It exits when standard input ends.
 *
 * <p>Concurrency: {@code --threads} buyers at a time, each thread with its own connection; the lock client
 * is shared, as a client is meant to be. Failure modes: a purchase that throws counts as an error; a
 * connection that cannot be opened fails the worker before {@code READY} (exit 69).
 */
@Command(name = "worker", hidden = true, description = "A flash-sale buyer process of dlock demo.")
final class WorkerCommand implements Plan {
    private static final int ERRORS_SHOWN = 3;

    @Option(names = "--database", required = true)
    String database;

    @Option(names = "--threads", defaultValue = "8")
    int threads;

    @Option(names = "--think", defaultValue = "1ms")
    Duration think;

    private final Environment env;

    WorkerCommand(Environment env) {
        this.env = env;
    }

    @Override
    public int execute() {
        return Main.guarded(env, this::work);
    }

    private int work() throws Exception {
        List<Connection> connections = new ArrayList<>();
        ExecutorService pool = Executors.newFixedThreadPool(threads);
        try {
            List<FlashSale> sales = new ArrayList<>();
            for (int i = 0; i < threads; i++) {
                Connection connection = open();
                connections.add(connection);
                sales.add(new FlashSale(connection, think));
            }
            say("READY");
            BufferedReader in = new BufferedReader(new InputStreamReader(env.in(), StandardCharsets.UTF_8));
            for (String line = in.readLine(); line != null; line = in.readLine()) {
                String[] round = line.split("\t");
                if (!round[0].equals("PREPARE") || round.length < 4) {
                    env.err().println("worker: unexpected command '" + line + "'");
                    return ExitCodes.SOFTWARE;
                }
                FlashSale.Strategy strategy = FlashSale.Strategy.valueOf(round[1]);
                int firstBuyer = Integer.parseInt(round[2]);
                int buyers = Integer.parseInt(round[3]);
                try (LockClient client = round.length > 4 ? connect(round[4]) : null) {
                    DistributedLock lock = client == null ? null : client.lock(DemoCommand.LOCK_NAME);
                    for (FlashSale sale : sales) {
                        sale.warmUp();
                    }
                    say("READY");
                    if (!"GO".equals(in.readLine())) {
                        return ExitCodes.SOFTWARE;
                    }
                    say(runRound(pool, sales, strategy, firstBuyer, buyers, lock));
                }
            }
            return ExitCodes.OK;
        } finally {
            pool.shutdownNow();
            for (Connection connection : connections) {
                try {
                    connection.close();
                } catch (SQLException e) {
                    // closing after the work is done: nothing left to protect
                }
            }
        }
    }

    /** Runs one round; returns the {@code ERROR} lines and the {@code RESULT} line. */
    private String runRound(
            ExecutorService pool,
            List<FlashSale> sales,
            FlashSale.Strategy strategy,
            int firstBuyer,
            int buyers,
            DistributedLock lock)
            throws Exception {
        AtomicInteger next = new AtomicInteger();
        AtomicInteger bought = new AtomicInteger();
        AtomicInteger turnedAway = new AtomicInteger();
        AtomicLongArray latencies = new AtomicLongArray(buyers);
        ConcurrentLinkedQueue<String> errors = new ConcurrentLinkedQueue<>();
        List<Future<?>> running = new ArrayList<>();
        for (FlashSale sale : sales) {
            running.add(pool.submit(() -> {
                for (int i = next.getAndIncrement(); i < buyers; i = next.getAndIncrement()) {
                    long start = System.nanoTime();
                    try {
                        if (sale.buy(strategy, firstBuyer + i, lock)) {
                            bought.incrementAndGet();
                        } else {
                            turnedAway.incrementAndGet();
                        }
                    } catch (InterruptedException e) {
                        Thread.currentThread().interrupt();
                        return;
                    } catch (Exception e) {
                        errors.add(e.toString().replace('\n', ' '));
                    }
                    latencies.set(i, (System.nanoTime() - start) / 1_000);
                }
            }));
        }
        for (Future<?> future : running) {
            future.get();
        }
        StringJoiner micros = new StringJoiner(",");
        for (int i = 0; i < buyers; i++) {
            micros.add(Long.toString(latencies.get(i)));
        }
        StringBuilder report = new StringBuilder();
        errors.stream()
                .limit(ERRORS_SHOWN)
                .forEach(error -> report.append("ERROR ").append(error).append('\n'));
        return report.append("RESULT ")
                .append(bought.get())
                .append(' ')
                .append(turnedAway.get())
                .append(' ')
                .append(errors.size())
                .append(' ')
                .append(micros)
                .toString();
    }

    private static LockClient connect(String uri) {
        return LockClient.builder(uri)
                .namespace(DemoCommand.NAMESPACE)
                .leaseTime(Duration.ofSeconds(10))
                .build();
    }

    private void say(String line) {
        env.out().println(line);
        env.out().flush();
    }

    private Connection open() {
        try {
            return DriverManager.getConnection(database);
        } catch (SQLException e) {
            throw new IllegalStateException("cannot connect to " + database + ": " + e.getMessage(), e);
        }
    }
}
