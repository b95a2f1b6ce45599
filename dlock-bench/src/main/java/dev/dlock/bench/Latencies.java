package dev.dlock.bench;

import java.util.Arrays;

/**
 * A growable list of latencies in nanoseconds, exact percentiles by sorting.
 *
 * <p>Concurrency: not thread-safe; each worker thread records into its own list and the lists are merged
 * after the threads have ended.
 */
final class Latencies {
    private long[] values = new long[1024];
    private int size;

    void add(long nanos) {
        if (size == values.length) {
            values = Arrays.copyOf(values, size * 2);
        }
        values[size++] = nanos;
    }

    void addAll(Latencies other) {
        for (int i = 0; i < other.size; i++) {
            add(other.values[i]);
        }
    }

    int size() {
        return size;
    }

    /**
     * The nearest-rank percentile in microseconds, 0 when empty.
     *
     * @param percent between 0 (exclusive) and 100
     */
    double percentileMicros(double percent) {
        if (size == 0) {
            return 0;
        }
        long[] sorted = Arrays.copyOf(values, size);
        Arrays.sort(sorted);
        int rank = (int) Math.ceil(percent / 100.0 * size);
        return sorted[Math.max(0, Math.min(size, rank) - 1)] / 1000.0;
    }
}
