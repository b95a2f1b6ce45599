package dev.dlock.chaos;

import java.nio.file.Files;
import java.nio.file.Path;
import java.util.ArrayList;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;

/**
 * The controller of the fault-injection suite: {@code scripts/chaos.sh [--quick] [--store NAME]...
 * [--fault NAME]... [--events N]}.
 *
 * <p>It sets up the network (namespaces when it can), starts the resource database, then runs each
 * store in turn ({@link StoreRun}) and writes {@code report.json}, {@code report.md} and one timeline
 * PNG per store. Exit status: 0 when every store met the hard targets (no stale fenced write accepted,
 * no fenced update lost, the locks granted again after faults, nothing held after the run), 1 when one
 * did not, 2 for bad arguments.
 */
public final class Main {
    private Main() {}

    /**
     * Parses the command line without running anything.
     *
     * @param args the arguments of {@code scripts/chaos.sh}
     * @return the options
     * @throws Options.UsageException naming the bad argument
     */
    static Options fromArgs(String... args) throws Options.UsageException {
        return Options.parse(args);
    }

    /**
     * Runs the suite.
     *
     * @param args see {@link Options#USAGE}
     * @throws Exception when the harness itself cannot run
     */
    public static void main(String[] args) throws Exception {
        if (List.of(args).contains("--help") || List.of(args).contains("-h")) {
            System.out.println(Options.USAGE);
            return;
        }
        Options options;
        try {
            options = fromArgs(args);
        } catch (Options.UsageException e) {
            System.err.println("chaos: " + e.getMessage());
            System.err.println(Options.USAGE);
            System.exit(2);
            return;
        }
        System.exit(run(options));
    }

    static int run(Options options) throws Exception {
        long started = System.nanoTime();
        Files.createDirectories(options.out());
        Path work = Files.createTempDirectory("dlock-chaos-");
        String classpath = System.getProperty("java.class.path");
        List<StoreRun.Result> results = new ArrayList<>();
        boolean root = "root".equals(System.getProperty("user.name"));
        try (Net net = Net.open(root);
                SqlServer resource = SqlServer.postgres(net.resourceHost(), work, false)) {
            // killed (Ctrl-C, timeout): no store, client or namespace outlives the controller
            Thread cleanup = new Thread(
                    () -> {
                        ProcessHandle.current().descendants().forEach(ProcessHandle::destroyForcibly);
                        net.close();
                    },
                    "chaos-cleanup");
            Runtime.getRuntime().addShutdownHook(cleanup);
            System.err.println("[chaos] network: " + (net.namespaces() ? "namespaces" : "loopback") + "; libfaketime: "
                    + (FakeClock.library() != null ? "yes" : "no") + "; seed " + options.seed());
            for (String store : options.stores()) {
                try {
                    results.add(new StoreRun(store, options, net, resource, work, classpath).run());
                } catch (Exception e) {
                    System.err.println("[chaos] " + store + ": ERROR " + e);
                    Map<String, Object> figures = new LinkedHashMap<>();
                    figures.put("error", String.valueOf(e.getMessage()));
                    results.add(new StoreRun.Result(
                            store, figures, List.of("did not run: " + e.getMessage()), null, Map.of()));
                }
            }
        } finally {
            Proc.deleteTree(work);
        }
        long seconds = (System.nanoTime() - started) / 1_000_000_000L;
        Report.write(options, results, seconds);
        for (StoreRun.Result r : results) {
            if (r.history() != null) {
                Timeline.draw(r, options.out().resolve("timeline-" + r.store() + ".png"));
            }
        }
        boolean failed = results.stream().anyMatch(r -> !r.failures().isEmpty());
        System.err.println("[chaos] " + (failed ? "FAILED" : "passed") + " in " + seconds + " s; report in "
                + options.out().resolve("report.md"));
        return failed ? 1 : 0;
    }
}
