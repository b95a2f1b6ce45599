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
import java.util.Set;
import java.util.TreeSet;

/**
 * The told-first measure of issue 22: for every grant of an exclusive lock ({@code x}, the write side of
 * {@code rw}), whether another client's earlier hold of it was still believed held at that instant: its
 * release not begun ({@code releasing}), not told (no {@code lost} signal, no failed check) and its local
 * lease deadline, by its own clock, not yet passed. Such a grant is <b>not told first</b>.
 *
 * <p>Design note: the holder's deadline is on its own monotonic clock; each {@code deadline} event carries
 * it (ns), reported at the grant and whenever a renewal moved it ({@code ChaosClient.Held}). Every time
 * used here is when a report was sent, mapped to the controller's clock with the section's own reports:
 * offset = the least (arrival ms - monotonic ms) among them, which errs by the shortest transit (well
 * under a millisecond on loopback), taken only among reports of the same clock period as the one mapped
 * (a {@code clock-client} step of that client, or its step back, starts a new period; reports within a
 * re-read window of one are not used, since the process may or may not have seen it yet): a step after
 * the grant once pulled a grant's mapped instant 7 s early; arrival times alone are not enough, since a busy controller or
 * client can hold a report back for tens of milliseconds (a release that arrived 56 ms late once made a
 * released holder look superseded). The grant instant is taken as when the successor's {@code grant}
 * report was sent, the latest it can have been; so a grant counted as not told first was one for certain,
 * up to {@link #TOLERANCE_MILLIS}, allowed for the mapping's error. A renewal less than 10 ms (the report's
 * poll) before the successor's grant can be missed, which makes the holder's belief look shorter: the
 * measure can miss such a case, never invent one.
 *
 * <p>Faults not counted: a step of the store's clock ({@code clock-store}: Redis and the databases expire
 * by it, so a forward step beyond the documented bound ends holds early, docs/safety.md) and a step of the
 * holder's or the successor's clock ({@code clock-client}: libfaketime steps the monotonic clock too, which
 * cannot happen on a real machine, and the mapping above no longer holds). Grants not told first while one
 * of them was in effect are reported apart and do not fail the run.
 */
final class ToldFirst {
    /** The mapping's allowance: a belief that outlasts the grant by at most this is not counted. */
    static final long TOLERANCE_MILLIS = 10;

    private static final Set<Fault> NOT_COUNTED = Set.of(Fault.CLOCK_STORE, Fault.CLOCK_CLIENT);

    private long grants;
    private long supersessions;
    private long toldFirst;
    private long notToldFirst;
    private long notToldFirstUncounted;
    private long longestMillis;
    private final List<String> examples = new ArrayList<>();
    /** Per client, the windows (controller ms, from and to) in which its clock may have been stepped. */
    private final Map<Integer, List<long[]>> clockSteps = new LinkedHashMap<>();

    /**
     * Measures every grant of the run.
     *
     * @param sections every section of the run; semaphore sections ({@code sem}) are skipped
     * @param faults the injected faults
     * @param end the run's end, controller time (ms)
     */
    ToldFirst(Collection<Section> sections, List<FaultRecord> faults, long end) {
        for (FaultRecord f : faults) {
            if (f.fault() == Fault.CLOCK_CLIENT && f.client() >= 0) {
                List<long[]> windows = clockSteps.computeIfAbsent(f.client(), c -> new ArrayList<>());
                windows.add(new long[] {f.start(), f.start() + FakeClock.REREAD_MILLIS});
                if (f.end() >= 0) {
                    windows.add(new long[] {f.end(), f.end() + FakeClock.REREAD_MILLIS});
                }
            }
        }
        List<Section> exclusive = new ArrayList<>(sections);
        exclusive.removeIf(s -> s.lock.equals("sem"));
        exclusive.sort(Comparator.comparingLong(s -> s.grantAt));
        for (Section next : exclusive) {
            grants++;
            long grantAt = Math.min(next.grantAt, sent(next, next.events.get(0)));
            Section worst = null;
            long worstBelief = Long.MIN_VALUE;
            boolean superseded = false;
            for (Section old : exclusive) {
                if (old.client == next.client || !old.lock.equals(next.lock) || old.token >= next.token) {
                    continue;
                }
                if (old.grantAt > next.grantAt || heldUntil(old) <= grantAt) {
                    continue;
                }
                superseded = true;
                long belief = beliefEnd(old, next.grantAt);
                if (belief > worstBelief) {
                    worstBelief = belief;
                    worst = old;
                }
            }
            if (!superseded) {
                continue;
            }
            supersessions++;
            long overlap = worstBelief - grantAt;
            if (overlap <= TOLERANCE_MILLIS) {
                toldFirst++;
                continue;
            }
            Set<Fault> hit = faultsOn(worst, next, faults, end);
            boolean counted = hit.stream().noneMatch(NOT_COUNTED::contains);
            if (counted) {
                notToldFirst++;
                longestMillis = Math.max(longestMillis, overlap);
            } else {
                notToldFirstUncounted++;
            }
            if (examples.size() < 20) {
                examples.add(next.lock + ": " + next.id + " (token " + next.token + ") granted at " + grantAt
                        + " ms while " + worst.id + " (token " + worst.token + ") believed it held for " + overlap
                        + " ms more; faults " + hit + (counted ? "" : " (not counted)"));
            }
        }
    }

    /**
     * When a section's report was sent, on the controller's clock (ms): its monotonic time plus the
     * section's offset, the least (arrival - monotonic) among its reports of the same clock period (all of
     * them when there is none outside a step's window). A report can arrive late (a busy controller or
     * client); its monotonic time says when it was sent, which is what matters here.
     */
    private long sent(Section s, Event e) {
        int period = clockPeriod(s.client, e.at());
        long offset = Long.MAX_VALUE;
        for (Event any : s.events) {
            if (!inClockStep(s.client, any.at()) && clockPeriod(s.client, any.at()) == period) {
                offset = Math.min(offset, any.at() - any.mono() / 1_000_000L);
            }
        }
        if (offset == Long.MAX_VALUE) {
            for (Event any : s.events) {
                offset = Math.min(offset, any.at() - any.mono() / 1_000_000L);
            }
        }
        return e.mono() / 1_000_000L + offset;
    }

    /** How many of the client's clock-step windows had closed by {@code at}. */
    private int clockPeriod(int client, long at) {
        int closed = 0;
        for (long[] window : clockSteps.getOrDefault(client, List.of())) {
            if (window[1] < at) {
                closed++;
            }
        }
        return closed;
    }

    /** Whether {@code at} falls in one of the client's clock-step windows. */
    private boolean inClockStep(int client, long at) {
        for (long[] window : clockSteps.getOrDefault(client, List.of())) {
            if (window[0] <= at && at <= window[1]) {
                return true;
            }
        }
        return false;
    }

    /**
     * Until when {@code s} held: the start of its release ({@code releasing}, sent before the store call:
     * the store may grant the next client before the release's answer is back), or its end as the checker
     * knows it (a kill, the run's end).
     */
    private long heldUntil(Section s) {
        long end = s.endAt;
        for (Event e : s.events) {
            if (Checker.ends(e)) {
                end = Math.min(end, sent(s, e));
            }
        }
        return end;
    }

    /**
     * Until when (controller ms) {@code old} believed it held, as known at {@code at}: the first of its
     * release (or kill), its first {@code lost} or {@code told} report, and its last reported deadline,
     * each as sent.
     */
    private long beliefEnd(Section old, long at) {
        long end = heldUntil(old);
        long deadline = Long.MAX_VALUE;
        for (Event e : old.events) {
            if (e.type().equals("lost") || e.type().equals("told")) {
                end = Math.min(end, sent(old, e));
            }
            if (e.type().equals("deadline") && e.at() <= at) {
                deadline = sent(old, e) + (Long.parseLong(e.detail()) - e.mono()) / 1_000_000L;
            }
        }
        return Math.min(end, deadline);
    }

    /**
     * The faults in effect on the store or on either client, from the earlier holder's invoke to the
     * successor's grant. A clock step is in effect until its process re-read the clock file after the step
     * back ({@link FakeClock#REREAD_MILLIS} after the fault's recorded end): a fresh-seed run once counted a
     * grant half a second after a client's step back was written as not told first.
     */
    private static Set<Fault> faultsOn(Section old, Section next, List<FaultRecord> faults, long end) {
        Set<Fault> hit = new TreeSet<>();
        for (FaultRecord f : faults) {
            long fEnd = f.end() < 0 ? end : f.end() + (NOT_COUNTED.contains(f.fault()) ? FakeClock.REREAD_MILLIS : 0);
            boolean onThem = f.client() < 0 || f.client() == old.client || f.client() == next.client;
            if (onThem && f.start() <= next.grantAt && fEnd >= old.invokeAt) {
                hit.add(f.fault());
            }
        }
        return hit;
    }

    /** Grants not told first outside the uncounted faults: each fails the run. */
    long notToldFirst() {
        return notToldFirst;
    }

    Map<String, Object> figures() {
        Map<String, Object> out = new LinkedHashMap<>();
        out.put("grants", grants);
        out.put("supersessions", supersessions);
        out.put("told_first", toldFirst);
        out.put("not_told_first", notToldFirst);
        out.put("not_told_first_clock_steps", notToldFirstUncounted);
        out.put("longest_not_told_ms", longestMillis);
        out.put("tolerance_ms", TOLERANCE_MILLIS);
        out.put("examples", examples);
        return out;
    }
}
