package dev.dlock.bench;

import java.util.List;
import java.util.Locale;
import java.util.Map;
import java.util.Optional;

/**
 * Renders a run as {@code results.json} (one object per row, exactly the fields {@code scenario, system,
 * backend, clients, threads, seconds, ops_per_s, p50_us, p99_us, violations}) and {@code results.md} (the
 * environment, every row, dlock's ratio to each peer per scenario, the targets, the held figures).
 */
final class Reports {
    private Reports() {}

    /** How a target is judged. */
    enum Kind {
        /** dlock's ops/s at least {@code bound} times the peer's. */
        THROUGHPUT,
        /** dlock's p99 at most {@code bound} times the peer's. */
        P99_RATIO,
        /** dlock's p99 at most {@code bound} milliseconds (no peer). */
        P99_MILLIS,
        /** dlock's ops/s at least {@code bound} (no peer). */
        OPS,
        /** every client's share of grants within [1/{@code bound}, {@code bound}] of the fair share. */
        SHARES
    }

    /** A target of the performance issue (issue 13), checked on one backend, against one peer or alone. */
    record Target(String scenario, String backend, String peer, Kind kind, double bound) {
        String text() {
            return switch (kind) {
                case THROUGHPUT ->
                    String.format(Locale.ROOT, "%s %s: dlock >= %.2fx %s", backend, scenario, bound, peer);
                case P99_RATIO ->
                    String.format(Locale.ROOT, "%s %s: dlock p99 <= %.1fx %s's", backend, scenario, bound, peer);
                case P99_MILLIS -> String.format(Locale.ROOT, "%s %s: dlock p99 <= %.0f ms", backend, scenario, bound);
                case OPS -> String.format(Locale.ROOT, "%s %s: dlock >= %,.0f cycles/s", backend, scenario, bound);
                case SHARES ->
                    String.format(
                            Locale.ROOT,
                            "%s %s: every dlock client's share within [%.1f, %.0f]x of fair",
                            backend,
                            scenario,
                            1 / bound,
                            bound);
            };
        }

        /** The measured value as shown, and whether it meets the target; empty when a row is missing. */
        Optional<String[]> judge(List<Row> rows) {
            Optional<Row> found = find(rows, scenario, "dlock", backend);
            Optional<Row> other = peer == null ? Optional.empty() : find(rows, scenario, peer, backend);
            if (found.isEmpty() || (peer != null && other.isEmpty())) {
                return Optional.empty();
            }
            Row d = found.get();
            return Optional.of(
                    switch (kind) {
                        case THROUGHPUT ->
                            ratioVerdict(d.opsPerS() / other.get().opsPerS(), true);
                        case P99_RATIO -> ratioVerdict(d.p99Us() / other.get().p99Us(), false);
                        case P99_MILLIS ->
                            verdict(String.format(Locale.ROOT, "%.1f ms", d.p99Us() / 1000), d.p99Us() / 1000 <= bound);
                        case OPS -> verdict(String.format(Locale.ROOT, "%,.0f", d.opsPerS()), d.opsPerS() >= bound);
                        case SHARES ->
                            verdict(
                                    String.format(Locale.ROOT, "%.2f-%.2f", d.minShare(), d.maxShare()),
                                    d.minShare() >= 1 / bound && d.maxShare() <= bound);
                    });
        }

        private String[] ratioVerdict(double value, boolean atLeast) {
            return verdict(String.format(Locale.ROOT, "%.2fx", value), atLeast ? value >= bound : value <= bound);
        }

        private static String[] verdict(String measured, boolean met) {
            return new String[] {measured, met ? "yes" : "**no**"};
        }
    }

    /**
     * Issue 13's targets (held leases are judged from the held rows below). The mem target is twice the
     * 13.5k cycles/s measured before the issue.
     */
    static final List<Target> TARGETS = List.of(
            new Target("uncontended", "redis", "raw", Kind.THROUGHPUT, 0.9),
            new Target("distinct", "redis", "raw", Kind.THROUGHPUT, 0.9),
            new Target("contended", "redis", "redisson-lock", Kind.THROUGHPUT, 5),
            new Target("contended", "redis", "spring-redis-spin", Kind.THROUGHPUT, 3),
            new Target("contended", "redis", "spring-redis-spin", Kind.P99_RATIO, 0.5),
            new Target("contended", "redis", null, Kind.SHARES, 2),
            new Target("uncontended", "zookeeper", "raw", Kind.THROUGHPUT, 0.95),
            new Target("contended", "zookeeper", "curator", Kind.THROUGHPUT, 4),
            new Target("contended", "zookeeper", null, Kind.SHARES, 2),
            new Target("contended", "postgresql", "spring-jdbc", Kind.THROUGHPUT, 3),
            new Target("contended", "postgresql", "spring-jdbc", Kind.P99_RATIO, 0.5),
            new Target("contended", "mariadb", null, Kind.P99_MILLIS, 100),
            new Target("contended", "mem", null, Kind.OPS, 27_000));

    /** "At most a few commands per second" for 10,000 held leases, read as at most 5. */
    static final double HELD_COMMANDS_PER_SECOND = 5;

    /** "No thread per lease", read as fewer than 10 threads added while holding. */
    static final int HELD_ADDED_THREADS = 10;

    static String json(List<Row> rows) {
        StringBuilder b = new StringBuilder("[\n");
        for (int i = 0; i < rows.size(); i++) {
            Row r = rows.get(i);
            b.append(String.format(
                    Locale.ROOT,
                    "  {\"scenario\": %s, \"system\": %s, \"backend\": %s, \"clients\": %d, \"threads\": %d,"
                            + " \"seconds\": %s, \"ops_per_s\": %s, \"p50_us\": %s, \"p99_us\": %s, \"violations\": %d,"
                            + " \"grants_per_client\": %s, \"min_share\": %s, \"max_share\": %s}",
                    quote(r.scenario()),
                    quote(r.system()),
                    quote(r.backend()),
                    r.clients(),
                    r.threads(),
                    number(r.seconds()),
                    number(r.opsPerS()),
                    number(r.p50Us()),
                    number(r.p99Us()),
                    r.violations(),
                    r.grantsPerClient(),
                    number(r.minShare()),
                    number(r.maxShare())));
            b.append(i + 1 < rows.size() ? ",\n" : "\n");
        }
        return b.append("]\n").toString();
    }

    private static String quote(String s) {
        return "\"" + s.replace("\\", "\\\\").replace("\"", "\\\"") + "\"";
    }

    private static String number(double d) {
        if (d == Math.rint(d) && Math.abs(d) < 1e15) {
            return Long.toString((long) d);
        }
        return Double.toString(d);
    }

    static Optional<Row> find(List<Row> rows, String scenario, String system, String backend) {
        return rows.stream()
                .filter(r -> r.scenario().equals(scenario)
                        && r.system().equals(system)
                        && r.backend().equals(backend))
                .findFirst();
    }

    static String markdown(BenchRun.Outcome outcome, Options options) {
        List<Row> rows = outcome.rows();
        StringBuilder b = new StringBuilder();
        b.append("# dlock benchmark results\n\n");
        b.append("Produced by `scripts/bench.sh")
                .append(options.quick() ? " --quick" : "")
                .append("` (module `dlock-bench`). Loopback, one machine, every system against the same servers in")
                .append(" one run.\n\n");
        b.append("| | |\n|---|---|\n");
        for (Map.Entry<String, String> e : outcome.environment().entrySet()) {
            b.append("| ").append(e.getKey()).append(" | ").append(e.getValue()).append(" |\n");
        }
        b.append(String.format(
                Locale.ROOT,
                "| settings | warm-up %.1f s per round, %.1f s measured per cell in %d interleaved rounds;"
                        + " held: %,d leases for %.0f s |\n\n",
                options.warmup().toMillis() / 1000.0,
                options.measure().toMillis() / 1000.0,
                options.rounds(),
                options.heldLeases(),
                options.held().toMillis() / 1000.0));
        b.append("The machine is shared (2 cores, other builds and tests may be running): compare systems within")
                .append(" one run, not across runs. The load averages above tell how busy it was.\n\n");

        b.append("## All results\n\n");
        b.append("ops/s: lock-unlock cycles per second (handoff: hand-offs per second; held: store commands per")
                .append(" second while holding). p50/p99: one cycle (handoff: release to next entry; held: one")
                .append(" acquisition). threads: per client.\n\n");
        b.append("| scenario | system | backend | clients x threads | ops/s | p50 us | p99 us | violations |"
                + " client share min-max |\n");
        b.append("|---|---|---|---|---:|---:|---:|---:|---:|\n");
        for (Row r : rows) {
            b.append(String.format(
                    Locale.ROOT,
                    "| %s | %s | %s | %d x %d | %,.1f | %,.1f | %,.1f | %d | %s |\n",
                    r.scenario(),
                    r.system(),
                    r.backend(),
                    r.clients(),
                    r.threads(),
                    r.opsPerS(),
                    r.p50Us(),
                    r.p99Us(),
                    r.violations(),
                    r.grantsPerClient().size() > 1
                            ? String.format(Locale.ROOT, "%.2f-%.2f", r.minShare(), r.maxShare())
                            : "—"));
        }
        b.append("\nclient share: each client's grants in the measuring windows against the fair share (total /")
                .append(" clients); 1.00-1.00 is perfectly fair, 0.00 means a client starved.\n");

        b.append("\n## dlock's ratio to each peer\n\n");
        b.append("Throughput ratio = dlock ops/s / peer ops/s (higher is better for dlock); p99 ratio = dlock p99 /")
                .append(" peer p99 (lower is better). Held: commands/s ratio = dlock / peer (lower is better).\n\n");
        b.append("| scenario | backend | peer | dlock ops/s | peer ops/s | throughput ratio | p99 ratio |\n");
        b.append("|---|---|---|---:|---:|---:|---:|\n");
        for (Row d : rows) {
            if (!d.system().equals("dlock")) {
                continue;
            }
            for (Row p : rows) {
                if (p.system().equals("dlock")
                        || !p.scenario().equals(d.scenario())
                        || !p.backend().equals(d.backend())) {
                    continue;
                }
                b.append(String.format(
                        Locale.ROOT,
                        "| %s | %s | %s | %,.1f | %,.1f | %s | %s |\n",
                        d.scenario(),
                        d.backend(),
                        p.system(),
                        d.opsPerS(),
                        p.opsPerS(),
                        ratio(d.opsPerS(), p.opsPerS()),
                        ratio(d.p99Us(), p.p99Us())));
            }
        }

        b.append("\n## Targets\n\n");
        b.append("| target | measured | met |\n|---|---:|---|\n");
        for (Target t : TARGETS) {
            Optional<String[]> judged = t.judge(rows);
            b.append("| ").append(t.text());
            b.append(judged.map(v -> " | " + v[0] + " | " + v[1] + " |\n").orElse(" | not measured | - |\n"));
        }
        for (HeldRunner.Held h : outcome.held()) {
            if (!h.row().system().equals("dlock")) {
                continue;
            }
            b.append(String.format(
                    Locale.ROOT,
                    "| %s held: renewal traffic for %,d leases <= %.0f commands/s | %.2f/s | %s |\n",
                    h.row().backend(),
                    h.leases(),
                    HELD_COMMANDS_PER_SECOND,
                    h.row().opsPerS(),
                    h.row().opsPerS() <= HELD_COMMANDS_PER_SECOND ? "yes" : "**no**"));
            b.append(String.format(
                    Locale.ROOT,
                    "| %s held: no thread per lease (< %d threads added for %,d leases) | +%d | %s |\n",
                    h.row().backend(),
                    HELD_ADDED_THREADS,
                    h.leases(),
                    h.addedThreads(),
                    h.addedThreads() < HELD_ADDED_THREADS ? "yes" : "**no**"));
        }

        if (!outcome.held().isEmpty()) {
            b.append("\n## Held leases\n\n");
            b.append("One client acquires the leases one after another on one thread and holds them with renewal")
                    .append(" on. Store commands are counted on the wire by a proxy between that client and the")
                    .append(" store (mem: calls into the backend). Heap: used heap after full GCs, holding minus")
                    .append(" before. Lost: of a sample of up to 100 names, how many a second client could take")
                    .append(" at the end of the hold.\n\n");
            b.append("| system | backend | leases | acquire all (s) | acquire p50 us | acquire p99 us |"
                    + " commands/s while holding | dlock renew() calls | heap MB | threads added | lost |\n");
            b.append("|---|---|---:|---:|---:|---:|---:|---:|---:|---:|---:|\n");
            for (HeldRunner.Held h : outcome.held()) {
                Row r = h.row();
                b.append(String.format(
                        Locale.ROOT,
                        "| %s | %s | %,d | %.2f | %,.1f | %,.1f | %.2f | %s | %.1f | %d | %d |\n",
                        r.system(),
                        r.backend(),
                        h.leases(),
                        h.acquireSeconds(),
                        r.p50Us(),
                        r.p99Us(),
                        r.opsPerS(),
                        r.system().equals("dlock") ? Long.toString(h.renewCalls()) : "-",
                        h.heapMb(),
                        h.addedThreads(),
                        r.violations()));
            }
        }

        if (!outcome.skipped().isEmpty()) {
            b.append("\n## Skipped systems\n\n");
            outcome.skipped().forEach(s -> b.append("- ").append(s).append('\n'));
        }
        if (!outcome.failures().isEmpty()) {
            b.append("\n## Failed cells\n\n");
            outcome.failures().forEach(s -> b.append("- ").append(s).append('\n'));
        }
        return b.toString();
    }

    private static String ratio(double a, double b) {
        if (b <= 0 || a <= 0) {
            return "-";
        }
        return String.format(Locale.ROOT, "%.2fx", a / b);
    }
}
