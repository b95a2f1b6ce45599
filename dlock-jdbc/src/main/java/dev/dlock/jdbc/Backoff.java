package dev.dlock.jdbc;

import java.util.LinkedHashMap;
import java.util.Map;
import java.util.concurrent.ThreadLocalRandom;

/**
 * Retry hints for databases that cannot push wake-ups (MySQL, MariaDB, H2): bounded exponential backoff
 * with jitter per waiting acquisition.
 *
 * <p>The n-th busy answer to one owner suggests a retry after a random time in {@code [d/2, d]} with
 * {@code d = min(MAX, BASE * 2^(n-1))}: 10 ms, 20 ms, 40 ms ... up to 200 ms. When the database told how
 * long the current hold has left and that is sooner, the hint is that instead. The engine retries at the
 * hint at the latest, and at once when a lock of the same client is released.
 *
 * <p>Concurrency: one small map under a monitor, bounded to {@link #TRACKED} owners (least recently
 * used evicted), so owners that stop waiting without telling anyone cost nothing.
 */
final class Backoff {
    static final long BASE_MILLIS = 10;
    static final long MAX_MILLIS = 200;
    private static final int TRACKED = 4096;

    private final Map<String, Integer> attempts = new LinkedHashMap<>(64, 0.75f, true) {
        private static final long serialVersionUID = 1L;

        @Override
        protected boolean removeEldestEntry(Map.Entry<String, Integer> eldest) {
            return size() > TRACKED;
        }
    };

    /** The hint for one more busy answer to {@code owner}; {@code remainingMillis} is -1 when unknown. */
    long next(String owner, long remainingMillis) {
        int n;
        synchronized (attempts) {
            n = attempts.merge(owner, 1, Integer::sum);
        }
        long ceiling = Math.min(MAX_MILLIS, BASE_MILLIS << Math.min(n - 1, 10));
        long hint = ceiling / 2 + ThreadLocalRandom.current().nextLong(ceiling / 2 + 1);
        return remainingMillis >= 0 ? Math.min(hint, remainingMillis) : hint;
    }

    /**
     * Forgets an owner that got its grant or stopped waiting.
     *
     * @return whether the owner had busy answers (among the {@link #TRACKED} owners remembered)
     */
    boolean forget(String owner) {
        synchronized (attempts) {
            return attempts.remove(owner) != null;
        }
    }
}
