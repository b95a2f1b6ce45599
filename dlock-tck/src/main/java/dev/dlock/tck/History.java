package dev.dlock.tck;

import static org.assertj.core.api.Assertions.assertThat;

import java.util.ArrayList;
import java.util.Comparator;
import java.util.List;
import java.util.Map;
import java.util.concurrent.ConcurrentLinkedQueue;
import java.util.stream.Collectors;

/**
 * Records critical sections (name, fencing token, entry and exit times, holder) from many threads and
 * checks them afterwards: no two holders of an exclusive lock overlap, tokens strictly increase in order
 * of entry, a semaphore never has more holders than permits.
 *
 * <p>Times are {@code System.nanoTime()} taken inside the critical section (after the grant, before the
 * release), so an overlap in the record is an overlap in reality. Safe for concurrent use.
 */
public final class History {
    /**
     * One critical section.
     *
     * @param name the lock name
     * @param token the fencing token of the grant
     * @param startNanos entry time
     * @param endNanos exit time
     * @param holder who held it (thread or client label)
     */
    public record Interval(String name, long token, long startNanos, long endNanos, String holder) {}

    private final ConcurrentLinkedQueue<Interval> intervals = new ConcurrentLinkedQueue<>();

    /** Creates an empty history. */
    public History() {}

    /**
     * Runs a critical section and records it.
     *
     * @param name the lock name
     * @param token the grant's fencing token
     * @param holder a label for the holder
     * @param body the work inside the section
     */
    public void record(String name, long token, String holder, Runnable body) {
        long start = System.nanoTime();
        try {
            body.run();
        } finally {
            intervals.add(new Interval(name, token, start, System.nanoTime(), holder));
        }
    }

    /**
     * All recorded sections.
     *
     * @return a snapshot
     */
    public List<Interval> intervals() {
        return new ArrayList<>(intervals);
    }

    /**
     * How many sections were recorded.
     *
     * @return the count
     */
    public int size() {
        return intervals.size();
    }

    /**
     * Asserts, per name, that sections do not overlap and tokens strictly increase in order of entry.
     */
    public void assertExclusive() {
        for (Map.Entry<String, List<Interval>> e : byName().entrySet()) {
            List<Interval> list = e.getValue();
            list.sort(Comparator.comparingLong(Interval::startNanos));
            for (int i = 1; i < list.size(); i++) {
                Interval prev = list.get(i - 1);
                Interval next = list.get(i);
                assertThat(next.startNanos())
                        .as("lock '%s': %s entered before %s left", e.getKey(), next, prev)
                        .isGreaterThanOrEqualTo(prev.endNanos());
                assertThat(next.token())
                        .as("lock '%s': token of %s not greater than that of %s", e.getKey(), next, prev)
                        .isGreaterThan(prev.token());
            }
        }
    }

    /**
     * Asserts, per name, that at no moment more than {@code permits} sections were open, and that the
     * tokens are all distinct.
     *
     * @param permits the most holders allowed at once
     */
    public void assertAtMost(int permits) {
        for (Map.Entry<String, List<Interval>> e : byName().entrySet()) {
            List<long[]> events = new ArrayList<>();
            for (Interval i : e.getValue()) {
                events.add(new long[] {i.startNanos(), 1});
                events.add(new long[] {i.endNanos(), -1});
            }
            // At equal times, exits count before entries.
            events.sort(Comparator.<long[]>comparingLong(a -> a[0]).thenComparingLong(a -> a[1]));
            int open = 0;
            int max = 0;
            for (long[] ev : events) {
                open += (int) ev[1];
                max = Math.max(max, open);
            }
            assertThat(max)
                    .as("semaphore '%s' had more holders than permits", e.getKey())
                    .isLessThanOrEqualTo(permits);
            long distinct =
                    e.getValue().stream().mapToLong(Interval::token).distinct().count();
            assertThat(distinct)
                    .as("tokens of '%s' are distinct", e.getKey())
                    .isEqualTo(e.getValue().size());
        }
    }

    private Map<String, List<Interval>> byName() {
        return intervals.stream()
                .collect(Collectors.groupingBy(Interval::name, Collectors.toCollection(ArrayList::new)));
    }
}
