package dev.dlock.internal.lease;

import dev.dlock.spi.BackendContext;
import dev.dlock.spi.DriftMargin;
import java.util.Objects;
import java.util.concurrent.ConcurrentHashMap;
import java.util.concurrent.TimeUnit;

/**
 * Tells from the store clock readings that come with answers ({@link
 * BackendContext.BackendEvents#storeClock}) that a store's clock jumped forward, and by how much; the
 * {@link Watchdog} then cuts its leases' deadlines.
 *
 * <p>Design note. Each source has one baseline: an earlier reading {@code (s_a, sent_a, answered_a)}. The
 * store served that request at some moment between {@code sent_a} and {@code answered_a}, and a new one
 * {@code (s_b, sent_b, answered_b)} between {@code sent_b} and {@code answered_b}, so the store's real time
 * between the two is at most {@code answered_b - sent_a}. A clock that runs true advances no more; one that
 * advanced more than that plus a tolerance jumped forward. The tolerance is the {@link DriftMargin} of that
 * window (1% + 2 ms), the allowance the engine already makes for clocks running at different rates (an NTP
 * slew is at most 0.05%) and for timer granularity. A smaller jump goes unnoticed: with leases renewed every
 * third of their time the window is about that third, so what is missed stays under the margin every
 * deadline keeps. The jump is taken at its upper bound, {@code s_b - s_a} less the least real time between
 * the two, {@code max(0, sent_b - answered_a)}: the store may have run that little, and a larger cut is the
 * holder's safe side (it exceeds the true jump by at most the two round trips).
 *
 * <p>Order: readings may overlap and arrive in any order; the bound holds for any pair, so each reading is
 * judged against the baseline. A reading becomes the baseline only when its request was sent after the
 * baseline's answer arrived (so the store served it later), or when it showed a jump (so that the next
 * reading does not count the same jump again). A slow answer to a request served before a jump, arriving
 * after the jump was counted, therefore looks like a step back and changes nothing, instead of becoming a
 * baseline from which the jump would be counted twice. A real step back becomes the baseline with the first
 * reading sent after the baseline's answer; it needs nothing else (holds last longer at the store).
 *
 * <p>Confirmations in flight: a renewal or grant served before a jump and answered after it was handled
 * sets a deadline that misses the cut. {@link #owedSince} tells how much to cut such a deadline: every jump
 * recorded after its request was sent (the last {@value #KEPT} are kept, plenty for requests in flight,
 * which last at most the operation timeout).
 *
 * <p>Concurrency: a source's readings are judged under its baseline's monitor (a few arithmetic steps), so
 * sources never contend. Nothing is allocated per reading once a source is known, and {@link #owedSince}
 * reads one volatile when no jump was recorded since the request was sent (the renewal path calls it for
 * every lease).
 */
final class StoreClocks {
    /** How many jumps are kept for {@link #owedSince}. */
    static final int KEPT = 8;

    /** Larger store clock differences (a century) are clamped, so that the arithmetic cannot overflow. */
    private static final long MAX_DIFFERENCE_MICROS = TimeUnit.DAYS.toMicros(36_500);

    private final ConcurrentHashMap<String, Baseline> baselines = new ConcurrentHashMap<>();

    /** When each recorded jump's answer arrived, its size and reason; a ring, guarded by this. */
    private final long[] jumpAnswered = new long[KEPT];

    private final long[] jumpNanos = new long[KEPT];
    private final String[] jumpReasons = new String[KEPT];
    private int recorded;
    /** The answer time of the last jump recorded; meaningful once {@link #anyJump} is set. */
    private volatile long lastJumpAnswered;

    private volatile boolean anyJump;

    /**
     * Judges a reading against its source's baseline.
     *
     * @return by how many nanoseconds the store's clock jumped forward, 0 when it did not (or the reading
     *     cannot tell)
     * @throws NullPointerException when {@code source} is null
     * @throws IllegalArgumentException when the answer is dated before the request was sent
     */
    long reading(String source, long storeMicros, long sentNanos, long answeredNanos) {
        Objects.requireNonNull(source, "source");
        if (answeredNanos - sentNanos < 0) {
            throw new IllegalArgumentException("a store clock reading from " + source + " answered (" + answeredNanos
                    + ") before its request was sent (" + sentNanos + ")");
        }
        Baseline baseline = baselines.get(source);
        if (baseline == null) {
            baseline = baselines.computeIfAbsent(source, s -> new Baseline());
        }
        return baseline.judge(storeMicros, sentNanos, answeredNanos);
    }

    /** Records a jump whose reading was answered at {@code answeredNanos}, before the leases are cut. */
    synchronized void record(long answeredNanos, long nanos, String reason) {
        int slot = recorded++ % KEPT;
        jumpAnswered[slot] = answeredNanos;
        jumpNanos[slot] = nanos;
        jumpReasons[slot] = reason;
        if (!anyJump || answeredNanos - lastJumpAnswered > 0) {
            lastJumpAnswered = answeredNanos;
        }
        anyJump = true;
    }

    /**
     * How much to cut a deadline that a confirmation sent at {@code sentNanos} set: the jumps recorded from
     * answers that arrived after it was sent.
     *
     * @return 0 when none, else the nanoseconds to cut
     */
    long owedSince(long sentNanos) {
        if (!anyJump || sentNanos - lastJumpAnswered >= 0) {
            return 0;
        }
        synchronized (this) {
            long owed = 0;
            for (int i = 0; i < Math.min(recorded, KEPT); i++) {
                if (jumpAnswered[i] - sentNanos > 0) {
                    owed += jumpNanos[i];
                }
            }
            return owed;
        }
    }

    /** {@return the reason of the last jump recorded, or null} */
    synchronized String lastReason() {
        return recorded == 0 ? null : jumpReasons[(recorded - 1) % KEPT];
    }

    /** The baseline reading of one source. */
    private static final class Baseline {
        private boolean set;
        private long storeMicros;
        private long sentNanos;
        private long answeredNanos;

        synchronized long judge(long micros, long sent, long answered) {
            if (!set) {
                take(micros, sent, answered);
                return 0;
            }
            long window = answered - sentNanos;
            if (window > 0) {
                long difference =
                        Math.max(-MAX_DIFFERENCE_MICROS, Math.min(MAX_DIFFERENCE_MICROS, micros - storeMicros));
                long advance = TimeUnit.MICROSECONDS.toNanos(difference);
                if (advance - window > DriftMargin.nanos(TimeUnit.NANOSECONDS.toMillis(window))) {
                    long jump = advance - Math.max(0, sent - answeredNanos);
                    take(micros, sent, answered);
                    return jump;
                }
            }
            if (sent - answeredNanos >= 0) {
                take(micros, sent, answered);
            }
            return 0;
        }

        private void take(long micros, long sent, long answered) {
            set = true;
            storeMicros = micros;
            sentNanos = sent;
            answeredNanos = answered;
        }
    }
}
