package dev.dlock.chaos;

import dev.dlock.chaos.Checker.Section;
import dev.dlock.chaos.History.Event;
import dev.dlock.chaos.History.FaultRecord;
import java.util.ArrayList;
import java.util.Collection;
import java.util.Comparator;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;

/**
 * The liveness check of one store's run: after every moment all faults have healed, some grant must
 * arrive within the window (three lease times, a holder's longest job, plus the store's margin; set by
 * {@code StoreRun}), unless the next fault came first; at the end, every lock must be granted within it.
 * A failure names, for each lock, its last holder and that holder's last event, so it points at the hold
 * that was kept (for example a release that failed).
 */
final class Liveness {
    private final Collection<Section> sections;
    private final List<FaultRecord> faults;
    private final Collection<String> locks;
    private final long window;
    private final long end;
    private final List<String> failures = new ArrayList<>();

    Liveness(Collection<Section> sections, List<FaultRecord> faults, Collection<String> locks, long window, long end) {
        this.sections = sections;
        this.faults = faults;
        this.locks = locks;
        this.window = window;
        this.end = end;
    }

    List<String> failures() {
        return failures;
    }

    /** Runs the check; its failures are in {@link #failures()} afterwards. */
    Map<String, Object> figures() {
        List<long[]> spans = new ArrayList<>();
        for (FaultRecord f : faults) {
            spans.add(new long[] {f.start(), f.end() < 0 ? end : f.end()});
        }
        spans.sort(Comparator.comparingLong(a -> a[0]));
        List<long[]> merged = new ArrayList<>();
        for (long[] s : spans) {
            if (!merged.isEmpty() && s[0] <= merged.get(merged.size() - 1)[1]) {
                long[] last = merged.get(merged.size() - 1);
                last[1] = Math.max(last[1], s[1]);
            } else {
                merged.add(new long[] {s[0], s[1]});
            }
        }
        long checks = 0;
        long failed = 0;
        long maxGap = 0;
        for (int i = 0; i < merged.size(); i++) {
            long healed = merged.get(i)[1];
            long nextFault = i + 1 < merged.size() ? merged.get(i + 1)[0] : Long.MAX_VALUE;
            long firstGrant = sections.stream()
                    .mapToLong(s -> s.grantAt)
                    .filter(t -> t > healed)
                    .min()
                    .orElse(Long.MAX_VALUE);
            if (firstGrant <= healed + window) {
                checks++;
                maxGap = Math.max(maxGap, firstGrant - healed);
            } else if (nextFault >= healed + window && end >= healed + window) {
                checks++;
                failed++;
                List<String> stuck = new ArrayList<>();
                for (String lock : locks) {
                    stuck.add(lock + " " + lastHolder(lock, healed + window));
                }
                failures.add("no grant within " + window + " ms after the faults healed at " + healed + " ms; "
                        + String.join("; ", stuck));
            }
        }
        long lastHeal = merged.isEmpty() ? 0 : merged.get(merged.size() - 1)[1];
        List<String> starved = new ArrayList<>();
        for (String lock : locks) {
            boolean granted = sections.stream()
                    .anyMatch(s -> s.lock.equals(lock) && s.grantAt > lastHeal && s.grantAt <= lastHeal + window);
            if (!granted) {
                starved.add(lock);
                failures.add("lock " + lock + " not granted within " + window + " ms after the last fault healed: "
                        + lastHolder(lock, lastHeal + window));
            }
        }
        Map<String, Object> out = new LinkedHashMap<>();
        out.put("window_ms", window);
        out.put("checks", checks);
        out.put("failures", failed + starved.size());
        out.put("max_ms_to_first_grant_after_heal", maxGap);
        out.put("locks_not_granted_after_last_heal", starved);
        return out;
    }

    /**
     * Where a lock that nobody got points: the last section of it granted by {@code before}, and the last
     * event of that section (a {@code release_error}, a release the store never saw, a holder that went
     * quiet).
     */
    private String lastHolder(String lock, long before) {
        Section last = null;
        for (Section s : sections) {
            if (s.lock.equals(lock) && s.grantAt <= before && (last == null || s.grantAt > last.grantAt)) {
                last = s;
            }
        }
        if (last == null) {
            return "never granted";
        }
        Event e = last.events.get(last.events.size() - 1);
        return "last held by client " + last.client + " (section " + last.id + ", fence " + last.token
                + ", granted at " + last.grantAt + " ms), last event " + e.type() + " at " + e.at() + " ms"
                + (e.detail().isEmpty() ? "" : ": " + e.detail());
    }
}
