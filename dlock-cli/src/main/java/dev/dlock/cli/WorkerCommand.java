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
 * Hidden {@code dlock worker}: one of the demo's buyer processes. Opens one database connection per thread
 * (and a lock client for {@code dlock}), prints {@code READY}, waits for {@code GO} on standard input, runs
 * its buyers on its threads, and prints one line {@code RESULT <bought> <turned away> <errors>
 * <latencies in µs, comma-separated>}, plus {@code ERROR <message>} for its first few errors.
 *
 * <p>Concurrency: {@code --threads} buyers at a time, each thread with its own connection; the lock client
 * is shared, as a client is meant to be. Failure modes: a buyer whose purchase throws is counted as an
 * error; a connection that cannot be opened fails the worker before {@code READY} (exit 69).
 */
@Command(name = "worker", hidden = true, description = "A flash-sale buyer process of dlock demo.")
final class WorkerCommand implements Plan {
    private static final int ERRORS_SHOWN = 3;

    @Option(names = "--database", required = true)
    String database;

    @Option(names = "--strategy", required = true)
    FlashSale.Strategy strategy;

    @Option(names = "--lock-backend")
    String lockBackend;

    @Option(names = "--first-buyer", defaultValue = "0")
    int firstBuyer;

    @Option(names = "--buyers", required = true)
    int buyers;

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
        LockClient client = null;
        ExecutorService pool = Executors.newFixedThreadPool(threads);
        try {
            List<FlashSale> sales = new ArrayList<>();
            for (int i = 0; i < threads; i++) {
                Connection connection = open();
                connections.add(connection);
                FlashSale sale = new FlashSale(connection, think);
                sale.warmUp();
                sales.add(sale);
            }
            DistributedLock lock = null;
            if (strategy == FlashSale.Strategy.DLOCK) {
                client = LockClient.builder(lockBackend)
                        .namespace(DemoCommand.NAMESPACE)
                        .leaseTime(Duration.ofSeconds(10))
                        .build();
                lock = client.lock(DemoCommand.LOCK_NAME);
            }
            env.out().println("READY");
            env.out().flush();
            String go = new BufferedReader(new InputStreamReader(env.in(), StandardCharsets.UTF_8)).readLine();
            if (!"GO".equals(go)) {
                return ExitCodes.SOFTWARE;
            }
            AtomicInteger next = new AtomicInteger();
            AtomicInteger bought = new AtomicInteger();
            AtomicInteger turnedAway = new AtomicInteger();
            AtomicLongArray latencies = new AtomicLongArray(buyers);
            ConcurrentLinkedQueue<String> errors = new ConcurrentLinkedQueue<>();
            List<Future<?>> running = new ArrayList<>();
            DistributedLock sharedLock = lock;
            for (FlashSale sale : sales) {
                running.add(pool.submit(() -> {
                    for (int i = next.getAndIncrement(); i < buyers; i = next.getAndIncrement()) {
                        long start = System.nanoTime();
                        try {
                            if (sale.buy(strategy, firstBuyer + i, sharedLock)) {
                                bought.incrementAndGet();
                            } else {
                                turnedAway.incrementAndGet();
                            }
                        } catch (Exception e) {
                            if (e instanceof InterruptedException) {
                                Thread.currentThread().interrupt();
                                return;
                            }
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
            errors.stream().limit(ERRORS_SHOWN).forEach(error -> env.out().println("ERROR " + error));
            env.out().println("RESULT " + bought.get() + " " + turnedAway.get() + " " + errors.size() + " " + micros);
            env.out().flush();
            return ExitCodes.OK;
        } finally {
            pool.shutdownNow();
            if (client != null) {
                client.close();
            }
            for (Connection connection : connections) {
                try {
                    connection.close();
                } catch (SQLException e) {
                    // closing after the work is done: nothing left to protect
                }
            }
        }
    }

    private Connection open() throws SQLException {
        try {
            return DriverManager.getConnection(database);
        } catch (SQLException e) {
            throw new IllegalStateException("cannot connect to " + database + ": " + e.getMessage(), e);
        }
    }
}
