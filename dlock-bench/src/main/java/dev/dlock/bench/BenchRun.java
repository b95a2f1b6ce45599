package dev.dlock.bench;

import dev.dlock.testsupport.EtcdServers;
import java.io.PrintStream;
import java.util.ArrayList;
import java.util.Collections;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Locale;
import java.util.Map;

/**
 * One run of the bench: selects the systems, starts the in-process ZooKeeper, runs every lock scenario
 * for every system in interleaved rounds, then the held scenario, and collects the results.
 *
 * <p>Interleaving: the measuring time of a cell is split into rounds; each round runs every system once
 * (in catalog order, reversed every other round), each after its own warm-up, so that a change in the
 * machine's background load during the run falls on all systems alike.
 *
 * <p>Failure modes: a system that cannot run here (module missing, server down) is skipped and listed; a
 * cell that fails (exception, hang) is listed as a failure and has no row; the run continues either way.
 */
final class BenchRun {
    /** Everything a run produced. */
    record Outcome(
            List<Row> rows,
            List<HeldRunner.Held> held,
            List<String> skipped,
            List<String> failures,
            Map<String, String> environment) {}

    private BenchRun() {}

    /** What the rounds of one cell add up to. */
    private static final class Tally {
        long ops;
        long nanos;
        final Latencies latencies = new Latencies();
        long violations;
        String error;
        long[] perClient = new long[0];

        void add(CellRunner.Measurement m) {
            if (perClient.length < m.perClient().length) {
                perClient = java.util.Arrays.copyOf(perClient, m.perClient().length);
            }
            for (int i = 0; i < m.perClient().length; i++) {
                perClient[i] += m.perClient()[i];
            }
            ops += m.ops();
            nanos += m.measuredNanos();
            latencies.addAll(m.latencies());
            violations += m.violations();
            if (error == null) {
                error = m.error();
            }
        }
    }

    static Outcome run(Options options, PrintStream log) throws Exception {
        List<LockSystem> selected = new ArrayList<>();
        for (LockSystem s : Catalog.all()) {
            if (options.selects(s) && options.scenarios().stream().anyMatch(s::supports)) {
                selected.add(s);
            }
        }
        boolean needZooKeeper = selected.stream().anyMatch(s -> s.backend().equals("zookeeper"));
        boolean needEtcd = selected.stream().anyMatch(s -> s.backend().equals("etcd"));
        InProcessZooKeeper zk = needZooKeeper ? InProcessZooKeeper.start() : null;
        boolean needRedlock = selected.stream().anyMatch(s -> s.backend().equals("redlock"));
        LocalRedisMasters masters = needRedlock ? LocalRedisMasters.start(3) : null;
        EtcdServers etcd = null;
        try {
            etcd = needEtcd ? EtcdServers.single() : null;
            Endpoints base = options.endpoints();
            Endpoints endpoints = new Endpoints(
                    base.redis(),
                    zk != null ? new Endpoints.HostPort("127.0.0.1", zk.port()) : null,
                    base.postgres(),
                    base.mariadb(),
                    masters != null ? masters.addresses() : null,
                    etcd != null
                            ? new Endpoints.HostPort("127.0.0.1", etcd.member(0).clientPort())
                            : null);
            return runOn(options, selected, endpoints, log);
        } finally {
            if (zk != null) {
                zk.close();
            }
            if (masters != null) {
                masters.close();
            }
            if (etcd != null) {
                etcd.close();
            }
        }
    }

    private static Outcome runOn(Options options, List<LockSystem> selected, Endpoints endpoints, PrintStream log)
            throws Exception {
        long started = System.nanoTime();
        List<String> skipped = new ArrayList<>();
        List<LockSystem> ready = new ArrayList<>();
        for (LockSystem s : selected) {
            String reason = s.unavailableReason(endpoints);
            if (reason == null) {
                ready.add(s);
            } else {
                skipped.add(s.id() + ": " + reason);
                log.println("[bench] skipping " + s.id() + ": " + reason);
            }
        }
        Map<String, String> environment = Environment.capture(endpoints);
        String runId = Long.toString(System.currentTimeMillis(), 36);
        List<Row> rows = new ArrayList<>();
        List<String> failures = new ArrayList<>();
        long warmup = options.warmup().toNanos();
        long perRound = options.measure().toNanos() / options.rounds();
        for (Scenario scenario : options.scenarios()) {
            if (scenario == Scenario.HELD) {
                continue;
            }
            List<LockSystem> taking =
                    ready.stream().filter(s -> s.supports(scenario)).toList();
            Map<LockSystem, Tally> tallies = new LinkedHashMap<>();
            taking.forEach(s -> tallies.put(s, new Tally()));
            for (int round = 1; round <= options.rounds(); round++) {
                List<LockSystem> order = new ArrayList<>(taking);
                if (round % 2 == 0) {
                    Collections.reverse(order);
                }
                for (LockSystem s : order) {
                    String name = "b" + runId + "-" + scenario.label() + "-" + round + "-"
                            + s.id().replaceAll("[^a-z0-9]", "");
                    CellRunner.Measurement m;
                    try {
                        m = CellRunner.run(scenario, s, endpoints, warmup, perRound, name);
                    } catch (Exception e) {
                        m = new CellRunner.Measurement(0, perRound, new Latencies(), 0, e.toString(), new long[0]);
                    }
                    tallies.get(s).add(m);
                    log.printf(
                            Locale.ROOT,
                            "[bench %6.1fs] %-11s %-26s round %d/%d: %,10.0f ops/s  p99 %,9.0f us  violations %d%s%n",
                            (System.nanoTime() - started) / 1e9,
                            scenario.label(),
                            s.id(),
                            round,
                            options.rounds(),
                            m.ops() / (m.measuredNanos() / 1e9),
                            m.latencies().percentileMicros(99),
                            m.violations(),
                            m.error() != null ? "  ERROR " + m.error() : "");
                }
            }
            for (Map.Entry<LockSystem, Tally> e : tallies.entrySet()) {
                LockSystem s = e.getKey();
                Tally t = e.getValue();
                if (t.error != null) {
                    failures.add(scenario.label() + " " + s.id() + ": " + t.error);
                    continue;
                }
                double seconds = t.nanos / 1e9;
                rows.add(new Row(
                        scenario.label(),
                        s.name(),
                        s.backend(),
                        scenario.clients,
                        scenario.threads,
                        HeldRunner.round(seconds, 2),
                        HeldRunner.round(t.ops / seconds, 1),
                        HeldRunner.round(t.latencies.percentileMicros(50), 1),
                        HeldRunner.round(t.latencies.percentileMicros(99), 1),
                        t.violations,
                        java.util.Arrays.stream(t.perClient).boxed().toList()));
            }
        }
        List<HeldRunner.Held> held = new ArrayList<>();
        if (options.scenarios().contains(Scenario.HELD)) {
            for (LockSystem s : ready) {
                if (!s.supports(Scenario.HELD)) {
                    continue;
                }
                String name = "b" + runId + "-held-" + s.id().replaceAll("[^a-z0-9]", "");
                try {
                    HeldRunner.Held h = HeldRunner.run(
                            s, endpoints, options.heldLeases(), options.held().toNanos(), name);
                    held.add(h);
                    rows.add(h.row());
                    log.printf(
                            Locale.ROOT,
                            "[bench %6.1fs] held        %-26s %d leases: %,.1f store commands/s, heap +%.1f MB,"
                                    + " threads +%d, acquire p99 %,.0f us, violations %d%n",
                            (System.nanoTime() - started) / 1e9,
                            s.id(),
                            h.leases(),
                            h.row().opsPerS(),
                            h.heapMb(),
                            h.addedThreads(),
                            h.row().p99Us(),
                            h.row().violations());
                } catch (Exception e) {
                    failures.add("held " + s.id() + ": " + e);
                    log.println("[bench] held        " + s.id() + " ERROR " + e);
                }
            }
        }
        environment.put("load average at end", Environment.loadAverage());
        return new Outcome(rows, held, skipped, failures, environment);
    }
}
