package dev.dlock.cli;

import dev.dlock.spi.LockBackendProvider;
import java.io.IOException;
import java.net.InetAddress;
import java.net.ServerSocket;
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
        if (database != null && (database.startsWith("jdbc:h2:mem:") || !database.startsWith("jdbc:"))) {
            throw new ParameterException(
                    self,
                    "--database " + database + ": give a JDBC URL the worker processes can reach (an in-memory"
                            + " H2 database lives in one process; use jdbc:h2:tcp://...)");
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

            List<DemoWorkers.Row> rows = new ArrayList<>();
            try (Connection admin = DriverManager.getConnection(databaseUrl);
                    DemoWorkers buyerProcesses =
                            new DemoWorkers(env, databaseUrl, workers, threads, think, stock, buyers)) {
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
            for (DemoWorkers.Row row : rows) {
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

    private void printTable(List<DemoWorkers.Row> rows) {
        List<String[]> cells = new ArrayList<>();
        cells.add(new String[] {"strategy", "sold", "oversold", "orders/s", "p50", "p99"});
        for (DemoWorkers.Row row : rows) {
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
