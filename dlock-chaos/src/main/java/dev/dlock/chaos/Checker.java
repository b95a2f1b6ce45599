package dev.dlock.chaos;

import dev.dlock.chaos.History.Event;
import dev.dlock.chaos.History.FaultRecord;
import java.util.ArrayList;
import java.util.Comparator;
import java.util.HashMap;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;
import java.util.PriorityQueue;
import java.util.Set;
import java.util.TreeMap;
import java.util.TreeSet;

/**
 * Reads one store's history and ledgers and computes the figures of the report.
 *
 * <ul>
 *   <li><b>Stale fenced writes accepted</b> (must be 0): in the database's order of accepted fenced
 *       writes to one row, a write whose token is lower than an earlier one, or equal to an earlier one
 *       of another section (two grants with one token). <b>Fenced lost updates</b> (must be 0): accepted
 *       fenced increments minus the final value.
 *   <li><b>Unfenced control</b>: sections whose database-clock interval began while as many others as
 *       the lock has permits were inside (overlaps), and unfenced increments minus the final value (lost
 *       updates).
 *   <li><b>Token regressions</b> (must be 0): see {@link TokenOrder}.
 *   <li><b>Superseded leases</b> ({@link Superseded}): a section still open (no release yet) when another client's grant of
 *       the same exclusive lock with a higher token arrived (its report may have arrived first). A {@code
 *       lost} signal or {@code told} check before the holder's next fenced step after that grant (even
 *       one before the grant) = the holder was told; else {@code valid} (or a write of a section that does
 *       not check again) = it was not, and the fenced step that followed was rejected (the fence caught
 *       it) or accepted (the successor had not written yet). Each is attributed to the faults in effect on
 *       that client or the store during the section.
 *   <li><b>Told first</b> (must be 0 not told first, outside store and client clock steps): see {@link
 *       ToldFirst}.
 *   <li><b>Liveness</b> ({@link Liveness}): after every moment all faults have healed, some grant must arrive within the
 *       window (three lease times, a holder's longest job, plus the store's margin; set by {@code
 *       StoreRun}), unless the next fault came first; at the end, every lock must be granted within it.
 *       A failure names, for each lock, its last holder and that holder's last event, so it points at
 *       the hold that was kept (for example a release that failed).
 * </ul>
 *
 * <p>This class keeps the sections and the fence and control checks; the superseded count and the
 * liveness check are classes of their own. Times are the controller's arrival times (one clock), except the unfenced intervals, which are the
 * resource database's clock.
 */
final class Checker {
    private final List<Event> events;
    private final List<FaultRecord> faults;
    private final Map<String, Ledger> ledgers;
    private final long window;
    private final long end;
    private final Map<String, Section> sections = new LinkedHashMap<>();
    private final List<String> failures = new ArrayList<>();

    /** One critical section as the controller saw it. */
    static final class Section {
        final String id;
        final int client;
        final String lock;
        final long token;
        final long invokeAt;
        final long grantAt;
        long endAt;
        final List<Event> events = new ArrayList<>();

        Section(Event grant, long invokeAt, long end) {
            this.id = grant.section();
            this.client = grant.client();
            this.lock = grant.lock();
            this.token = grant.token();
            this.invokeAt = invokeAt;
            this.grantAt = grant.at();
            this.endAt = end;
        }
    }

    Checker(List<Event> events, List<FaultRecord> faults, Map<String, Ledger> ledgers, long window, long end) {
        this.events = events;
        this.faults = faults;
        this.ledgers = ledgers;
        this.window = window;
        this.end = end;
        Map<String, Long> invokes = new HashMap<>();
        for (Event e : events) {
            if (e.type().equals("hello")) {
                // a client that says hello again was killed: its open sections ended at the kill
                long at = e.at();
                sections.values().stream()
                        .filter(s -> s.client == e.client() && s.endAt == end)
                        .forEach(s -> s.endAt = killTime(s.client, s.grantAt, at));
            } else if (e.type().equals("invoke")) {
                invokes.put(e.section(), e.at());
            } else if (e.type().equals("grant")) {
                // a section is reported invoke first, on the same connection as its grant
                sections.put(e.section(), new Section(e, invokes.getOrDefault(e.section(), e.at()), end));
            }
            Section s = sections.get(e.section());
            if (s != null) {
                s.events.add(e);
                if (ends(e) && s.endAt == end) {
                    s.endAt = e.at(); // releasing (sent before the store call), else release or release_error
                }
            }
        }
    }

    /** Whether {@code e} ends its section: {@code releasing}, {@code release} or {@code release_error}. */
    static boolean ends(Event e) {
        return e.type().equals("releasing") || e.type().startsWith("release");
    }

    private long killTime(int client, long after, long before) {
        return faults.stream()
                .filter(f -> f.fault() == Fault.KILL_CLIENT && f.client() == client)
                .filter(f -> f.start() >= after && f.start() <= before)
                .mapToLong(FaultRecord::start)
                .min()
                .orElse(before);
    }

    List<String> failures() {
        return failures;
    }

    Map<String, Section> sections() {
        return sections;
    }

    /** The faults in effect on the section's client or the store while it was open. */
    Set<Fault> faultsDuring(Section s) {
        Set<Fault> hit = new TreeSet<>();
        for (FaultRecord f : faults) {
            long fEnd = f.end() < 0 ? end : f.end();
            if ((f.client() < 0 || f.client() == s.client) && f.start() <= s.endAt && fEnd >= s.grantAt) {
                hit.add(f.fault());
            }
        }
        return hit;
    }

    /** The faults in effect on either section's client or the store from the first's invoke to the second's grant. */
    private Set<Fault> faultsBetween(Section first, Section second) {
        Set<Fault> hit = new TreeSet<>();
        long from = Math.min(first.invokeAt, second.invokeAt);
        long to = Math.max(first.grantAt, second.grantAt);
        for (FaultRecord f : faults) {
            long fEnd = f.end() < 0 ? end : f.end();
            boolean onThem = f.client() < 0 || f.client() == first.client || f.client() == second.client;
            if (onThem && f.start() <= to && fEnd >= from) {
                hit.add(f.fault());
            }
        }
        return hit;
    }

    /** Computes every figure; failures of the hard targets are added to {@link #failures()}. */
    Map<String, Object> figures() {
        Map<String, Object> out = new LinkedHashMap<>();
        Map<String, Map<String, Long>> byFault = new TreeMap<>();
        Map<String, Long> injected = new TreeMap<>();
        for (FaultRecord f : faults) {
            injected.merge(f.fault().id(), 1L, Long::sum);
            faultRow(byFault, f.fault()).merge("injected", 1L, Long::sum);
        }
        out.put("fault_events", (long) faults.size());
        out.put("faults", injected);
        Map<String, Long> grantsByLock = new TreeMap<>();
        Map<String, Long> grantsByClient = new TreeMap<>();
        for (Section s : sections.values()) {
            grantsByLock.merge(s.lock, 1L, Long::sum);
            grantsByClient.merge("client " + s.client, 1L, Long::sum);
            for (Fault f : faultsDuring(s)) {
                faultRow(byFault, f).merge("sections", 1L, Long::sum);
            }
        }
        out.put("critical_sections", (long) sections.size());
        out.put("grants_by_lock", grantsByLock);
        out.put("grants_by_client", grantsByClient);
        out.put("fenced", fenced());
        out.put("unfenced", unfenced(byFault));
        out.put(
                "superseded",
                new Superseded(sections.values(), this::faultsDuring, (id, figure) -> attribute(byFault, id, figure))
                        .figures());
        ToldFirst toldFirst = new ToldFirst(sections.values(), faults, end);
        out.put("told_first", toldFirst.figures());
        if (toldFirst.notToldFirst() > 0) {
            failures.add(toldFirst.notToldFirst() + " grant(s) not told first: another client's lease was still"
                    + " believed valid by its holder at the grant (see told_first.examples)");
        }
        Liveness liveness = new Liveness(sections.values(), faults, ledgers.keySet(), window, end);
        out.put("liveness", liveness.figures());
        failures.addAll(liveness.failures());
        out.put("by_fault", byFault);
        return out;
    }

    private static Map<String, Long> faultRow(Map<String, Map<String, Long>> byFault, Fault f) {
        return byFault.computeIfAbsent(f.id(), k -> new TreeMap<>());
    }

    private long count(String type) {
        return events.stream().filter(e -> e.type().equals(type)).count();
    }

    private Map<String, Object> fenced() {
        Map<String, Object> out = new LinkedHashMap<>();
        out.put("claims_accepted", count("claim_ok"));
        out.put("claims_rejected_stale", count("claim_rejected"));
        out.put("writes_accepted", count("write_ok"));
        out.put("writes_rejected_stale", count("write_rejected"));
        out.put("told_before_fenced_step", count("told"));
        out.put("lost_signals", count("lost"));
        long stale = 0;
        long lost = 0;
        for (Ledger l : ledgers.values()) {
            if (l.permits() != 1) {
                continue;
            }
            long max = Long.MIN_VALUE;
            String maxSection = null;
            for (Ledger.FencedWrite w : l.fenced()) {
                if (w.token() < max || (w.token() == max && !w.section().equals(maxSection))) {
                    stale++;
                } else {
                    max = w.token();
                    maxSection = w.section();
                }
            }
            lost += l.fenced().size() - l.fencedValue();
        }
        out.put("stale_writes_accepted", stale);
        out.put("lost_updates", lost);
        TokenOrder order = new TokenOrder(sections.values(), this::faultsBetween);
        out.put("token_regressions", (long) order.regressions().size());
        out.put("token_regression_pairs", order.regressions());
        out.put("token_arrival_order_differs", order.arrivalOrderDiffers());
        if (!order.regressions().isEmpty()) {
            failures.add(order.regressions().size() + " token regression(s): a grant's token not above one granted"
                    + " before its acquire began");
        }
        if (stale > 0) {
            failures.add(stale + " stale fenced write(s) accepted");
        }
        if (lost != 0) {
            failures.add(lost + " fenced update(s) lost");
        }
        return out;
    }

    private Map<String, Object> unfenced(Map<String, Map<String, Long>> byFault) {
        long overlaps = 0;
        long lost = 0;
        for (Ledger l : ledgers.values()) {
            List<Ledger.Interval> rows = new ArrayList<>(l.unfenced());
            rows.sort(Comparator.comparingLong(Ledger.Interval::enter));
            PriorityQueue<Long> open = new PriorityQueue<>();
            for (Ledger.Interval r : rows) {
                while (!open.isEmpty() && open.peek() <= r.enter()) {
                    open.poll();
                }
                if (open.size() >= l.permits()) {
                    overlaps++;
                    attribute(byFault, r.section(), "unfenced_overlaps");
                }
                open.add(r.exit());
            }
            if (l.permits() == 1) {
                lost += l.unfenced().size() - l.unfencedValue();
                Map<Long, List<String>> byRead = new HashMap<>();
                l.unfenced().forEach(r -> byRead.computeIfAbsent(r.readValue(), k -> new ArrayList<>())
                        .add(r.section()));
                byRead.values().stream()
                        .filter(v -> v.size() > 1)
                        .forEach(v -> v.forEach(sec -> attribute(byFault, sec, "unfenced_lost_updates")));
            }
        }
        Map<String, Object> out = new LinkedHashMap<>();
        out.put("overlaps", overlaps);
        out.put("lost_updates", lost);
        return out;
    }

    private void attribute(Map<String, Map<String, Long>> byFault, String sectionId, String figure) {
        Section s = sections.get(sectionId);
        if (s != null) {
            for (Fault f : faultsDuring(s)) {
                faultRow(byFault, f).merge(figure, 1L, Long::sum);
            }
        }
    }
}
