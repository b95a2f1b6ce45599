package dev.dlock.cli;

import java.io.BufferedReader;
import java.io.IOException;
import java.io.InputStreamReader;
import java.io.OutputStream;
import java.nio.charset.StandardCharsets;
import java.sql.Connection;
import java.time.Duration;
import java.util.ArrayList;
import java.util.Arrays;
import java.util.List;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.TimeUnit;

/**
 * The buyer processes of one {@code dlock demo} run: W child JVMs running {@link WorkerCommand}, started
 * once and given one round per strategy.
 *
 * <p>Protocol (one line each way, over the child's standard input and output): the child says {@code
 * READY}; this side sends {@code PREPARE strategy first count [lockUri]}, waits for every {@code READY},
 * then sends {@code GO} to all at once and reads one {@code RESULT} line per child. {@code ERROR} lines are
 * passed on to standard error.
 *
 * <p>Failure modes: a round that does not finish within {@link DemoCommand#STRATEGY_TIMEOUT} gets its
 * children killed, which ends their output and fails the round with a message; {@link #close()} ends the
 * children (end of input, then a kill after 10 s), also when the start failed half way.
 */
final class DemoWorkers implements AutoCloseable {
    /** What one strategy did. */
    record Row(
            String label,
            boolean locking,
            int sold,
            int oversold,
            double ordersPerSecond,
            long p50,
            long p99,
            int errors) {}

    private final Environment env;
    private final int workers;
    private final int threads;
    private final Duration think;
    private final int stock;
    private final int buyers;
    private final List<Process> processes = new ArrayList<>();
    private final List<BufferedReader> outputs = new ArrayList<>();

    DemoWorkers(Environment env, String databaseUrl, int workers, int threads, Duration think, int stock, int buyers)
            throws IOException {
        this.env = env;
        this.workers = workers;
        this.threads = threads;
        this.think = think;
        this.stock = stock;
        this.buyers = buyers;
        try {
            for (int w = 0; w < workers; w++) {
                Process process = new ProcessBuilder(JavaCommand.forMain(
                                List.of("-Xmx256m", "-XX:+UseSerialGC", "-XX:TieredStopAtLevel=1"),
                                "worker",
                                "--database",
                                databaseUrl,
                                "--threads",
                                Integer.toString(threads),
                                "--think",
                                think.toString()))
                        .redirectError(ProcessBuilder.Redirect.INHERIT)
                        .start();
                processes.add(process);
                outputs.add(
                        new BufferedReader(new InputStreamReader(process.getInputStream(), StandardCharsets.UTF_8)));
            }
            for (int w = 0; w < workers; w++) {
                readUntil(w, "READY");
            }
        } catch (IOException | RuntimeException e) {
            close();
            throw e;
        }
    }

    /** Runs one round: every worker prepares, then all start at one signal. */
    Row run(Connection admin, FlashSale.Strategy strategy, String lockUri) throws Exception {
        String label = lockUri == null ? strategy.label() : "dlock " + DemoCommand.label(lockUri);
        env.err().println("demo: running " + label + " ...");
        FlashSale.setUp(admin, stock);
        int first = 0;
        for (int w = 0; w < workers; w++) {
            int share = buyers / workers + (w < buyers % workers ? 1 : 0);
            send(
                    w,
                    "PREPARE\t" + strategy.name() + "\t" + first + "\t" + share
                            + (lockUri == null ? "" : "\t" + lockUri));
            first += share;
        }
        for (int w = 0; w < workers; w++) {
            readUntil(w, "READY");
        }
        // A worker that hangs is killed, which ends its output and fails the round with a message.
        CompletableFuture<Void> watchdog = CompletableFuture.runAsync(
                () -> processes.forEach(Process::destroyForcibly),
                CompletableFuture.delayedExecutor(DemoCommand.STRATEGY_TIMEOUT.toMillis(), TimeUnit.MILLISECONDS));
        long started = System.nanoTime();
        for (int w = 0; w < workers; w++) {
            send(w, "GO");
        }
        List<long[]> latencies = new ArrayList<>();
        int errors = 0;
        for (int w = 0; w < workers; w++) {
            String[] result = readUntil(w, "RESULT").split(" ", 5);
            errors += Integer.parseInt(result[3]);
            latencies.add(
                    result.length < 5 || result[4].isEmpty()
                            ? new long[0]
                            : Arrays.stream(result[4].split(","))
                                    .mapToLong(Long::parseLong)
                                    .toArray());
        }
        double seconds = (System.nanoTime() - started) / 1e9;
        watchdog.cancel(false);
        int sold = FlashSale.orders(admin);
        long[] all = latencies.stream().flatMapToLong(Arrays::stream).sorted().toArray();
        return new Row(
                label,
                strategy != FlashSale.Strategy.NONE,
                sold,
                Math.max(0, sold - stock),
                buyers / seconds,
                percentile(all, 0.50),
                percentile(all, 0.99),
                errors);
    }

    private void send(int worker, String line) throws IOException {
        OutputStream in = processes.get(worker).getOutputStream();
        in.write((line + "\n").getBytes(StandardCharsets.UTF_8));
        in.flush();
    }

    /** Reads a worker's output up to the line starting with {@code prefix}; passes ERROR lines on. */
    private String readUntil(int worker, String prefix) throws IOException {
        Process process = processes.get(worker);
        while (true) {
            String line = outputs.get(worker).readLine();
            if (line == null) {
                throw new IllegalStateException("demo worker " + process.pid() + " exited before " + prefix
                        + " (see its errors above; a round is stopped after " + DemoCommand.STRATEGY_TIMEOUT.toMinutes()
                        + " minutes)");
            }
            if (line.startsWith(prefix)) {
                return line;
            }
            if (line.startsWith("ERROR ")) {
                env.err().println("demo: worker " + process.pid() + ": " + line.substring(6));
            }
        }
    }

    /** Ends the workers: end of input makes them exit; those still alive after 10 s are killed. */
    @Override
    public void close() {
        for (Process process : processes) {
            try {
                process.getOutputStream().close();
            } catch (IOException e) {
                process.destroyForcibly();
            }
        }
        for (Process process : processes) {
            try {
                if (!process.waitFor(10, TimeUnit.SECONDS)) {
                    process.destroyForcibly();
                }
            } catch (InterruptedException e) {
                process.destroyForcibly();
                Thread.currentThread().interrupt();
            }
        }
    }

    private static long percentile(long[] sorted, double fraction) {
        if (sorted.length == 0) {
            return 0;
        }
        int index = (int) Math.ceil(fraction * sorted.length) - 1;
        return sorted[Math.max(0, Math.min(sorted.length - 1, index))];
    }
}
