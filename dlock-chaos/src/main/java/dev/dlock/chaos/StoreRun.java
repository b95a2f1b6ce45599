package dev.dlock.chaos;

import dev.dlock.LockClient;
import java.nio.file.Files;
import java.nio.file.Path;
import java.time.Duration;
import java.util.ArrayList;
import java.util.EnumSet;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;
import java.util.Random;
import java.util.Set;
import java.util.concurrent.TimeUnit;

/**
 * One store's run: start the store, the clients and the nemesis; after the faults, wait for the locks
 * to be granted again, stop the clients, look for leftovers, read the ledgers and check.
 *
 * <p>Failure modes: a store that cannot start, or locks never granted before any fault, fail this store's
 * run with that reason (reported, the next store still runs).
 */
final class StoreRun {
    static final List<String> LOCKS = List.of("x", "rw", "sem");

    private final String name;
    private final Stores.Factory factory;
    private final Options options;
    private final Net net;
    private final SqlServer resource;
    private final Path dir;
    private final String classpath;

    StoreRun(String name, Options options, Net net, SqlServer resource, Path dir, String classpath) {
        this.name = name;
        this.factory = Stores.ALL.get(name);
        this.options = options;
        this.net = net;
        this.resource = resource;
        this.dir = dir;
        this.classpath = classpath;
    }

    /**
     * The outcome of one store's run.
     *
     * @param store the store name
     * @param figures the checker's figures and the run's settings
     * @param failures what missed a hard target; empty when the store passed
     * @param history the events and faults, for the timeline
     * @param sections the critical sections, for the timeline
     */
    record Result(
            String store,
            Map<String, Object> figures,
            List<String> failures,
            History history,
            Map<String, Checker.Section> sections) {}

    Result run() throws Exception {
        Path storeDir = Files.createDirectories(dir.resolve(name));
        Path logs = Files.createDirectories(options.out().resolve("logs").resolve(name));
        long started = System.nanoTime();
        log("starting");
        try (Store store = factory.start(net.storeHost(), storeDir, classpath);
                History history = new History(net.resourceHost())) {
            long lease = options.leaseMillis();
            // A lock may legitimately stay taken for a client's longest job (three lease times, see
            // ChaosClient.workMillis: a 2-permit semaphore can have both permits in such jobs) or a dead
            // holder's lease; after that the store has its margin to grant again.
            long window = 3 * lease + store.marginMillis();
            List<String> locks = store.locks();
            List<String> keys = locks.stream().map(l -> name + "/" + l).toList();
            Resource.prepare(resource.jdbcUrl(), keys);
            Map<String, String> args = new LinkedHashMap<>();
            args.put("store", name);
            args.put("uri", store.workloadUri(lease));
            args.put("resource", resource.jdbcUrl());
            args.put("lease-ms", Long.toString(lease));
            args.put("locks", String.join(",", locks));
            args.put("seed", Long.toString(options.seed() + name.hashCode()));
            Random random = new Random(options.seed() ^ name.hashCode());
            Map<String, Object> figures = new LinkedHashMap<>();
            List<String> failures = new ArrayList<>();
            long end;
            try (Clients clients = new Clients(options.clients(), net, history, logs, classpath, args)) {
                clients.startAll();
                log("store up in " + ms(started) + " ms; " + options.clients() + " clients on "
                        + store.workloadUri(lease));
                awaitGrants(history, locks, -1, 90_000);
                Set<Fault> enabled = enabledFaults(store);
                log("faults: " + enabled);
                Nemesis nemesis =
                        new Nemesis(store, clients, net, history, random, lease, enabled, options.quick() ? 2 : 3);
                long deadline = System.nanoTime() + TimeUnit.SECONDS.toNanos(options.quick() ? 40 : 6 * 3600);
                int injected = nemesis.run(options.events(), deadline);
                long healed = history.now();
                log(injected + " faults injected; waiting for grants after the last heal");
                awaitGrants(history, locks, healed, window);
                Proc.sleep(500);
                end = history.now();
                clients.stopAll();
            }
            history.requireReaders();
            Map<String, Object> leaks = leaks(store, history, window);
            Map<String, Ledger> ledgers = new LinkedHashMap<>();
            for (String lock : locks) {
                ledgers.put(lock, Ledger.read(resource.jdbcUrl(), name, lock));
            }
            history.dump(logs.resolve("history.tsv"));
            Checker checker = new Checker(history.events(), history.faults(), ledgers, window, end);
            figures.put("store_uri", store.clientUri());
            if (store.serverVersion() != null) {
                figures.put("store_version", store.serverVersion());
            }
            figures.put("clients", options.clients());
            figures.put("lease_ms", lease);
            figures.put("run_ms", end);
            figures.putAll(checker.figures());
            figures.put("leaks", leaks);
            failures.addAll(checker.failures());
            if (((Number) leaks.get("holders_after_run")).longValue() != 0) {
                failures.add("locks still held after the run: " + leaks.get("holders_after_run"));
            }
            log("done in " + ms(started) + " ms" + (failures.isEmpty() ? "" : "; FAILED: " + failures));
            return new Result(name, figures, failures, history, checker.sections());
        }
    }

    private Set<Fault> enabledFaults(Store store) {
        Set<Fault> enabled = EnumSet.noneOf(Fault.class);
        for (Fault f : options.faults()) {
            boolean available = f.onClient()
                    ? (f != Fault.PARTITION || net.namespaces())
                            && (f != Fault.CLOCK_CLIENT || FakeClock.library() != null)
                    : store.faults().contains(f);
            if (available) {
                enabled.add(f);
            }
        }
        return enabled;
    }

    /** Waits until every lock has been granted after {@code since}; gives up after {@code millis}. */
    private void awaitGrants(History history, List<String> locks, long since, long millis) {
        long deadline = System.nanoTime() + TimeUnit.MILLISECONDS.toNanos(millis);
        while (System.nanoTime() < deadline) {
            history.requireReaders();
            if (locks.stream().allMatch(l -> history.grantedSince(l, since))) {
                return;
            }
            Proc.sleep(100);
        }
        if (since < 0) {
            throw new IllegalStateException(
                    "the locks were never granted before any fault (see the client logs in " + dir.resolve(name) + ")");
        }
    }

    private Map<String, Object> leaks(Store store, History history, long window) {
        Map<String, Object> out = new LinkedHashMap<>();
        long holders = -1;
        long deadline = System.nanoTime() + TimeUnit.MILLISECONDS.toNanos(window + 5000);
        try (LockClient admin = LockClient.builder(store.clientUri())
                .namespace("chaos")
                .operationTimeout(Duration.ofSeconds(5))
                .build()) {
            while (true) {
                holders = admin.list("").size();
                if (holders == 0 || System.nanoTime() > deadline) {
                    break;
                }
                Proc.sleep(250);
            }
        } catch (RuntimeException e) {
            log("could not list holders: " + e.getMessage());
        }
        out.put("holders_after_run", holders);
        out.put("raw_leftovers", store.leftovers());
        long threads = history.events().stream()
                .filter(e -> e.type().equals("closed"))
                .mapToLong(e -> Long.parseLong(e.detail().split(" ")[0]))
                .sum();
        out.put("client_threads_left_after_close", threads);
        out.put(
                "clients_closed_cleanly",
                history.events().stream().filter(e -> e.type().equals("closed")).count());
        return out;
    }

    private void log(String message) {
        System.err.println("[chaos] " + name + ": " + message);
    }

    private static long ms(long startNanos) {
        return (System.nanoTime() - startNanos) / 1_000_000;
    }
}
