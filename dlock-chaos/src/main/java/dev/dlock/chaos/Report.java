package dev.dlock.chaos;

import java.io.IOException;
import java.net.InetAddress;
import java.nio.file.Files;
import java.time.Instant;
import java.time.temporal.ChronoUnit;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;

/**
 * Writes {@code report.json} (every figure, nested as the checker made them) and {@code report.md} (a
 * summary table per store and a table per fault) into the output directory.
 */
final class Report {
    private Report() {}

    static void write(Options options, List<StoreRun.Result> results, long seconds) throws IOException {
        Map<String, Object> root = new LinkedHashMap<>();
        root.put("date", Instant.now().truncatedTo(ChronoUnit.SECONDS).toString());
        root.put("machine", machine());
        root.put("mode", options.quick() ? "quick" : "long");
        root.put("seed", options.seed());
        root.put("events_per_store_target", options.events());
        root.put("seconds", seconds);
        Map<String, Object> stores = new LinkedHashMap<>();
        for (StoreRun.Result r : results) {
            Map<String, Object> s = new LinkedHashMap<>(r.figures());
            s.put("passed", r.failures().isEmpty());
            s.put("failures", r.failures());
            stores.put(r.store(), s);
        }
        root.put("stores", stores);
        Files.writeString(options.out().resolve("report.json"), json(root, "") + "\n");
        Files.writeString(options.out().resolve("report.md"), markdown(root, results));
    }

    static String machine() {
        String host;
        try {
            host = InetAddress.getLocalHost().getHostName();
        } catch (IOException e) {
            host = "unknown";
        }
        return host + ", " + Runtime.getRuntime().availableProcessors() + " cores, "
                + System.getProperty("os.name") + " " + System.getProperty("os.version") + ", Java "
                + System.getProperty("java.version");
    }

    static String json(Object value, String indent) {
        if (value instanceof Map<?, ?> map) {
            if (map.isEmpty()) {
                return "{}";
            }
            StringBuilder b = new StringBuilder("{\n");
            int i = 0;
            for (Map.Entry<?, ?> e : map.entrySet()) {
                b.append(indent)
                        .append("  ")
                        .append(quote(String.valueOf(e.getKey())))
                        .append(": ");
                b.append(json(e.getValue(), indent + "  "));
                b.append(++i < map.size() ? ",\n" : "\n");
            }
            return b.append(indent).append('}').toString();
        }
        if (value instanceof List<?> list) {
            StringBuilder b = new StringBuilder("[");
            for (int i = 0; i < list.size(); i++) {
                b.append(i == 0 ? "" : ", ").append(json(list.get(i), indent));
            }
            return b.append(']').toString();
        }
        if (value instanceof Number || value instanceof Boolean) {
            return value.toString();
        }
        return value == null ? "null" : quote(value.toString());
    }

    private static String quote(String s) {
        StringBuilder b = new StringBuilder("\"");
        for (char c : s.toCharArray()) {
            switch (c) {
                case '"' -> b.append("\\\"");
                case '\\' -> b.append("\\\\");
                case '\n' -> b.append("\\n");
                case '\t' -> b.append("\\t");
                default -> {
                    if (c < 0x20) {
                        b.append(String.format("\\u%04x", (int) c));
                    } else {
                        b.append(c);
                    }
                }
            }
        }
        return b.append('"').toString();
    }

    @SuppressWarnings("unchecked")
    private static Object at(Map<String, Object> figures, String path) {
        Object v = figures;
        for (String p : path.split("\\.")) {
            if (!(v instanceof Map)) {
                return "";
            }
            v = ((Map<String, Object>) v).get(p);
        }
        return v == null ? "" : v;
    }

    @SuppressWarnings("unchecked")
    private static String markdown(Map<String, Object> root, List<StoreRun.Result> results) {
        StringBuilder b = new StringBuilder("# dlock chaos report\n\n");
        b.append("- date: ").append(root.get("date")).append('\n');
        b.append("- machine: ").append(root.get("machine")).append('\n');
        b.append("- mode: ")
                .append(root.get("mode"))
                .append(", target ")
                .append(root.get("events_per_store_target"))
                .append(" fault events per store, seed ")
                .append(root.get("seed"))
                .append(", ")
                .append(root.get("seconds"))
                .append(" s\n");
        for (StoreRun.Result r : results) {
            Object version = r.figures().get("store_version");
            if (version != null) {
                b.append("- ").append(r.store()).append(": ").append(version).append('\n');
            }
        }
        b.append('\n');
        b.append(
                        "| store | fault events | sections | fenced writes accepted | rejected as stale | **stale accepted** |")
                .append(" **token regressions** |")
                .append(" fenced lost updates | unfenced overlaps | unfenced lost updates | superseded: told |")
                .append(" not told, fence rejected | not told, fence accepted | supersessions at the grant |")
                .append(" told first | **not told first** | not told first (clock steps) | liveness failures |")
                .append(" held after run | raw leftovers | result |\n");
        b.append("|---|---:|---:|---:|---:|---:|---:|---:|---:|---:|---:|---:|---:|---:|---:|---:|---:|---:|---:|---:|")
                .append("---|\n");
        for (StoreRun.Result r : results) {
            Map<String, Object> f = r.figures();
            b.append("| ").append(r.store());
            for (String p : List.of(
                    "fault_events",
                    "critical_sections",
                    "fenced.writes_accepted",
                    "fenced.writes_rejected_stale",
                    "fenced.stale_writes_accepted",
                    "fenced.token_regressions",
                    "fenced.lost_updates",
                    "unfenced.overlaps",
                    "unfenced.lost_updates",
                    "superseded.told_before_next_fenced_step",
                    "superseded.not_told_fence_rejected",
                    "superseded.not_told_fence_accepted",
                    "told_first.supersessions",
                    "told_first.told_first",
                    "told_first.not_told_first",
                    "told_first.not_told_first_clock_steps",
                    "liveness.failures",
                    "leaks.holders_after_run",
                    "leaks.raw_leftovers")) {
                b.append(" | ").append(at(f, p));
            }
            b.append(" | ")
                    .append(r.failures().isEmpty() ? "pass" : "**FAIL**: " + String.join("; ", r.failures()))
                    .append(" |\n");
        }
        b.append("\nPer fault (sections open while the fault was in effect on their client or the store, and what")
                .append(" was attributed to it):\n");
        for (StoreRun.Result r : results) {
            Object byFault = r.figures().get("by_fault");
            if (!(byFault instanceof Map<?, ?> map) || map.isEmpty()) {
                continue;
            }
            b.append("\n### ").append(r.store()).append("\n\n");
            b.append("| fault | injected | sections hit | unfenced overlaps | unfenced lost updates |")
                    .append(
                            " not told, fence rejected | not told, fence accepted |\n|---|---:|---:|---:|---:|---:|---:|\n");
            for (Map.Entry<String, Map<String, Long>> e : ((Map<String, Map<String, Long>>) map).entrySet()) {
                Map<String, Long> row = e.getValue();
                b.append("| ").append(e.getKey());
                for (String k : List.of(
                        "injected",
                        "sections",
                        "unfenced_overlaps",
                        "unfenced_lost_updates",
                        "not_told_rejected",
                        "not_told_accepted")) {
                    b.append(" | ").append(row.getOrDefault(k, 0L));
                }
                b.append(" |\n");
            }
        }
        return b.toString();
    }
}
