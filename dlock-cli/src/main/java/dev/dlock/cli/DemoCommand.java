package dev.dlock.cli;

import dev.dlock.spi.LockBackendProvider;
import java.io.BufferedReader;
import java.io.IOException;
import java.io.InputStreamReader;
import java.io.OutputStream;
import java.net.InetAddress;
import java.net.ServerSocket;
import java.nio.charset.StandardCharsets;
import java.nio.file.Files;
import java.nio.file.Path;
import java.sql.Connection;
import java.sql.DriverManager;
import java.sql.SQLException;
import java.time.Duration;
import java.util.ArrayList;
import java.util.Arrays;
import java.util.Comparator;
import java.util.EnumSet;
import java.util.List;
import java.util.Locale;
import java.util.ServiceLoader;
import java.util.Set;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.TimeUnit;
import java.util.stream.Stream;
import org.h2.tools.Server;
import picocli.CommandLine;
import picocli.CommandLine.Command;
import picocli.CommandLine.Option;
import picocli.CommandLine.ParameterException;

/**
 * {@code dlock demo}: the flash sale of seed 004. S units of stock, B buyers spread over W worker processes
 * (child JVMs running {@link WorkerCommand}) that all start buying at one signal, once per strategy: {@code
 * none}, {@code optimistic}, {@code pessimistic} and a dlock lock on each backend (see {@link FlashSale}).
 * Prints one table: strategy, sold, oversold, orders/s, p50, p99.
 *
 * <p>With no {@code --backend} it needs nothing installed: a ZooKeeper server in this process and an H2
 * database in server mode (TCP on loopback) that the workers reach. With {@code --backend URI} (repeatable)
 * the dlock rows use those stores, and the database is {@code --database}, else the first {@code jdbc:}
 * backend, else the embedded H2.
 *
 * <p>Concurrency: the workers are started once and run one round per strategy, all at one signal; this
 * process sets up the table, gives the signal and collects their results. Failure modes: a round that does
 * not finish within {@link #STRATEGY_TIMEOUT} gets its workers killed and the demo fails (exit 69); a
 * locking strategy that does not sell exactly S (or B, if fewer) without
 * oversell makes the demo exit 1 after printing the table.
 */
@Command(
        name = "demo",
        sortOptions = false,
        description = {
            "Run the flash-sale demo: S units, B buyers in W processes, per locking strategy.",
            "Strategies: none (oversells), optimistic (conditional UPDATE), pessimistic (SELECT ... FOR",
            "UPDATE), and a dlock lock on each backend. Needs no install: embedded ZooKeeper and H2."
        })
final class DemoCommand implements Plan, Main.Validated {
    static final String NAMESPACE = "dlock-demo";
    static final String LOCK_NAME = "flash-sale:item-1";
    static final Duration STRATEGY_TIMEOUT = Duration.ofMinutes(3);

    @Option(names = "--stock", defaultValue = "100", paramLabel = "S", description = "Units for sale (default: 100).")
    int stock;

    @Option(
            names = "--buyers",
            defaultValue = "2000",
            paramLabel = "B",
            description = "Buyers, one unit each (default: 2000).")
    int buyers;

    @Option(names = "--workers", defaultValue = "4", paramLabel = "W", description = "Buyer processes (default: 4).")
    int workers;

    @Option(
            names = "--threads",
            defaultValue = "8",
            paramLabel = "T",
            description = "Concurrent buyers (and database connections) per process (default: 8).")
    int threads;

    @Option(
            names = "--think",
            defaultValue = "1ms",
            paramLabel = "DURATION",
            description = "Work between reading the stock and writing the order (default: 1ms).")
    Duration think;

    @Option(
            names = "--backend",
            paramLabel = "URI",
            description = "A lock store for a dlock row (repeatable). Default: embedded ZooKeeper (and "
                    + "H2 where the JDBC backend is present).")
    List<String> backends = new ArrayList<>();

    @Option(
            names = "--database",
            paramLabel = "JDBC_URL",
            description = "The shop's database. Default: the first jdbc: backend, else an embedded H2 server.")
    String database;

    @Option(
            names = "--strategy",
            split = ",",
            paramLabel = "NAME",
            description = "Strategies to run: none, optimistic, pessimistic, dlock (default: all).")
    Set<FlashSale.Strategy> strategies = EnumSet.allOf(FlashSale.Strategy.class);

    private final Environment env;

    DemoCommand(Environment env) {
        this.env = env;
    }

    @Override
    public void validate(CommandLine self) {
        for (String[] check : new String[][] {
            {"--stock", Integer.toString(stock)},
            {"--buyers", Integer.toString(buyers)},
            {"--workers", Integer.toString(workers)},
            {"--threads", Integer.toString(threads)}
        }) {
            if (Integer.parseInt(check[1]) < 1) {
                throw new ParameterException(self, check[0] + " must be at least 1, got " + check[1]);
            }
        }
        if (workers > buyers) {
            throw new ParameterException(self, "--workers (" + workers + ") must not exceed --buyers (" + buyers + ")");
        }
        for (String uri : backends) {
            if (uri.startsWith("mem:")) {
                throw new ParameterException(
                        self,
                        "--backend " + uri + ": mem: lives in one process; the demo's buyers are separate"
                                + " processes");
            }
            if (!available(uri)) {
                throw new ParameterException(self, "--backend " + uri + ": no lock backend in this build accepts it");
            }
        }
        if (strategies.isEmpty()) {
            throw new ParameterException(self, "--strategy needs at least one strategy");
        }
    }

    /** A {@code jdbc:} backend URI that creates dlock's tables if missing (the demo sets up what it uses). */
    static String withCreateTables(String uri) {
        if (uri.contains("dlock.createTables")) {
            return uri;
        }
        if (uri.startsWith("jdbc:h2:")) {
            return uri + ";dlock.createTables=true";
        }
        return uri + (uri.contains("?") ? "&" : "?") + "dlock.createTables=true";
    }

    /** The driver's URL of a {@code jdbc:} backend URI: without dlock's own {@code dlock.*} parameters. */
    static String withoutDlockParameters(String uri) {
        String main = uri;
        String query = null;
        int q = uri.indexOf('?');
        if (q >= 0) {
            main = uri.substring(0, q);
            query = uri.substring(q + 1);
        }
        StringBuilder url = new StringBuilder();
        for (String setting : main.split(";")) {
            if (!setting.startsWith("dlock.")) {
                url.append(url.length() == 0 ? "" : ";").append(setting);
            }
        }
        if (query != null) {
            List<String> kept = Arrays.stream(query.split("&"))
                    .filter(param -> !param.isEmpty() && !param.startsWith("dlock."))
                    .toList();
            if (!kept.isEmpty()) {
                url.append('?').append(String.join("&", kept));
            }
        }
        return url.toString();
    }

    /** Whether a backend module on the class path accepts the URI. */
    static boolean available(String uri) {
        for (LockBackendProvider provider : ServiceLoader.load(LockBackendProvider.class)) {
            if (provider.accepts(uri)) {
                return true;
            }
        }
        return false;
    }

    /** A short name for a backend URI: its scheme, two levels deep for JDBC ({@code jdbc:postgresql}). */
    static String label(String uri) {
        String[] parts = uri.split(":", 3);
        return parts[0].equals("jdbc") && parts.length > 1 ? "jdbc:" + parts[1] : parts[0];
    }

    @Override
    public int execute() {
        return Main.guarded(env, this::runDemo);
    }

    private int runDemo() throws Exception {
        List<AutoCloseable> resources = new ArrayList<>();
        try {
            List<String> lockBackends = new ArrayList<>();
            for (String uri : backends) {
                lockBackends.add(uri.startsWith("jdbc:") ? withCreateTables(uri) : uri);
            }
            String databaseUrl = database;
            String databaseLabel;
            if (databaseUrl == null) {
                databaseUrl = backends.stream()
                        .filter(uri -> uri.startsWith("jdbc:"))
                        .map(DemoCommand::withoutDlockParameters)
                        .findFirst()
                        .orElse(null);
            }
            if (databaseUrl == null) {
                databaseUrl = startH2(resources);
                databaseLabel = "H2 in server mode (embedded, " + databaseUrl + ")";
            } else {
                databaseLabel = databaseUrl;
            }
            if (backends.isEmpty() && strategies.contains(FlashSale.Strategy.DLOCK)) {
                Path data = Files.createTempDirectory("dlock-demo-zk");
                EmbeddedZooKeeper zookeeper = EmbeddedZooKeeper.start(data, 0);
                resources.add(() -> deleteTree(data));
                resources.add(zookeeper);
                for (String uri : List.of(zookeeper.uri(), withCreateTables(databaseUrl))) {
                    if (available(uri)) {
                        lockBackends.add(uri);
                    } else {
                        env.err()
                                .println("demo: no dlock row for " + label(uri) + ": its backend module is not in"
                                        + " this build");
                    }
                }
            }
            env.out()
                    .printf(
                            Locale.ROOT,
                            "flash sale: stock %d, %d buyers in %d processes x %d threads, think time %s%n",
                            stock,
                            buyers,
                            workers,
                            threads,
                            Durations.format(think));
            env.out().println("database: " + databaseLabel);
            if (!lockBackends.isEmpty()) {
                env.out().println("dlock backends: " + String.join(", ", lockBackends));
            }
            env.out().println();
            env.out().flush();

            List<Row> rows = new ArrayList<>();
            try (Connection admin = DriverManager.getConnection(databaseUrl);
                    Workers buyerProcesses = new Workers(databaseUrl)) {
                for (FlashSale.Strategy strategy : strategies) {
                    if (strategy == FlashSale.Strategy.DLOCK) {
                        for (String uri : lockBackends) {
                            rows.add(buyerProcesses.run(admin, strategy, uri));
                        }
                    } else {
                        rows.add(buyerProcesses.run(admin, strategy, null));
                    }
                }
                FlashSale.tearDown(admin);
            }
            printTable(rows);
            int expected = Math.min(stock, buyers);
            boolean allGood = true;
            for (Row row : rows) {
                if (row.locking() && (row.sold() != expected || row.oversold() != 0 || row.errors() > 0)) {
                    env.err()
                            .println("demo: FAILED: " + row.label() + " sold " + row.sold() + " of " + expected
                                    + " with " + row.errors() + " errors");
                    allGood = false;
                }
            }
            return allGood ? ExitCodes.OK : ExitCodes.BUSY;
        } finally {
            for (int i = resources.size() - 1; i >= 0; i--) {
                try {
                    resources.get(i).close();
                } catch (Exception e) {
                    env.err().println("demo: cleanup: " + e.getMessage());
                }
            }
        }
    }

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

    /** The buyer processes of one demo run, started once and given one round per strategy. */
    private final class Workers implements AutoCloseable {
        private final List<Process> processes = new ArrayList<>();
        private final List<BufferedReader> outputs = new ArrayList<>();

        Workers(String databaseUrl) throws IOException {
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
                    outputs.add(new BufferedReader(
                            new InputStreamReader(process.getInputStream(), StandardCharsets.UTF_8)));
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
            String label = lockUri == null ? strategy.label() : "dlock " + label(lockUri);
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
                    CompletableFuture.delayedExecutor(STRATEGY_TIMEOUT.toMillis(), TimeUnit.MILLISECONDS));
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
            long[] all =
                    latencies.stream().flatMapToLong(Arrays::stream).sorted().toArray();
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
                            + " (see its errors above; a round is stopped after " + STRATEGY_TIMEOUT.toMinutes()
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
    }

    private static long percentile(long[] sorted, double fraction) {
        if (sorted.length == 0) {
            return 0;
        }
        int index = (int) Math.ceil(fraction * sorted.length) - 1;
        return sorted[Math.max(0, Math.min(sorted.length - 1, index))];
    }

    private void printTable(List<Row> rows) {
        List<String[]> cells = new ArrayList<>();
        cells.add(new String[] {"strategy", "sold", "oversold", "orders/s", "p50", "p99"});
        for (Row row : rows) {
            cells.add(new String[] {
                row.label(),
                Integer.toString(row.sold()),
                Integer.toString(row.oversold()),
                String.format(Locale.ROOT, "%,.0f", row.ordersPerSecond()),
                millis(row.p50()),
                millis(row.p99())
            });
        }
        Table.print(env.out(), cells, 1);
        env.out().println();
        env.out()
                .println("orders/s: buy requests handled per second (bought or turned away); p50/p99: latency"
                        + " of one buy request.");
        env.out().flush();
    }

    private static String millis(long micros) {
        return String.format(Locale.ROOT, "%.1fms", micros / 1000.0);
    }

    /** Starts H2 in server mode with an in-memory database; returns the URL workers use. */
    private static String startH2(List<AutoCloseable> resources) throws SQLException, IOException {
        String name = "dlock_demo_" + ProcessHandle.current().pid();
        Connection keepAlive = DriverManager.getConnection("jdbc:h2:mem:" + name + ";DB_CLOSE_DELAY=-1");
        resources.add(keepAlive);
        int port;
        try (ServerSocket probe = new ServerSocket(0, 1, InetAddress.getLoopbackAddress())) {
            port = probe.getLocalPort();
        }
        Server server =
                Server.createTcpServer("-tcpPort", Integer.toString(port)).start();
        resources.add(server::stop);
        return "jdbc:h2:tcp://127.0.0.1:" + server.getPort() + "/mem:" + name + ";LOCK_TIMEOUT=10000";
    }

    private static void deleteTree(Path root) throws IOException {
        if (!Files.exists(root)) {
            return;
        }
        try (Stream<Path> paths = Files.walk(root)) {
            for (Path path : paths.sorted(Comparator.reverseOrder()).toList()) {
                Files.deleteIfExists(path);
            }
        }
    }
}
