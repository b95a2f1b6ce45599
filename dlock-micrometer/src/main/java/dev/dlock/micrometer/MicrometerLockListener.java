package dev.dlock.micrometer;

import dev.dlock.Lease;
import dev.dlock.LockClient;
import dev.dlock.LockListener;
import dev.dlock.LockTimeoutException;
import io.micrometer.core.instrument.Counter;
import io.micrometer.core.instrument.Gauge;
import io.micrometer.core.instrument.MeterRegistry;
import io.micrometer.core.instrument.Timer;
import java.time.Duration;
import java.util.HashMap;
import java.util.List;
import java.util.Map;
import java.util.Objects;
import java.util.concurrent.atomic.AtomicInteger;

/**
 * Records the contention of a {@link LockClient} as Micrometer meters. Give it to any client, not only the
 * one Spring Boot configures:
 *
 * <pre>{@code
 * MicrometerLockListener metrics = MicrometerLockListener.builder(registry)
 *         .namePatterns(List.of("invoice:*", "job:*"))
 *         .build();
 * LockClient client = LockClient.builder("redis://localhost:6379").listener(metrics).build();
 * metrics.bindActiveLeases(client); // optional: the dlock.leases.active gauge
 * }</pre>
 *
 * <h2>Meters</h2>
 *
 * <p>Every meter has the tag {@code name}: the first of the configured name patterns that matches the lock
 * name ({@code *} matches any characters), else {@code other}. The number of series is bounded by the
 * configuration, never by the lock names.
 *
 * <ul>
 *   <li>{@value #ACQUIRE} (timer with histogram; tag {@code outcome}: {@code granted}, {@code timeout},
 *       {@code rejected}, {@code failed}): wait time from the call to the grant or to giving up; its count
 *       is the acquisitions by outcome. Rejected callers (local queue full) are recorded with no wait.
 *   <li>{@value #HELD} (timer with histogram): hold time, from grant to release.
 *   <li>{@value #LOST} (counter; tag {@code reason}: {@code deadline} when no renewal succeeded before the
 *       lease's local deadline, {@code revoked} when the store no longer held it (expired, force-released),
 *       {@code other}): leases lost while held.
 *   <li>{@value #HELD_BACK} (counter): store answers that held a grant back because the store may have lost
 *       state while a forgotten lease was still running (a restarted Redis, a failover; the "told first"
 *       hold-back): each such answer to an attempt of this client.
 *   <li>{@value #QUEUE} (gauge): callers of this client waiting for a name now.
 *   <li>{@value #ACTIVE} (gauge, after {@link #bindActiveLeases}): leases the client holds now.
 * </ul>
 *
 * <p>Reentrant acquisitions are not counted; neither are the waits of {@code tryAcquire()} without a wait
 * that find the lock busy (they are {@code timeout}s of zero wait).
 *
 * <p>Concurrency: every meter is registered up front, per tag; recording is lock-free. The client hands
 * events to the listener on its own listener thread, so meters lag the calls by that hand-off. Failure
 * modes: none reach the caller. The queue gauge counts {@code queued}/{@code dequeued} events: if the
 * client ever dropped events (its listener thread 10,000 events behind), it can be off from then on; it
 * never goes below zero.
 */
public final class MicrometerLockListener implements LockListener {
    /** The wait-time timer's name. */
    public static final String ACQUIRE = "dlock.acquire";
    /** The hold-time timer's name. */
    public static final String HELD = "dlock.held";
    /** The lost-leases counter's name. */
    public static final String LOST = "dlock.leases.lost";
    /** The held-back answers counter's name. */
    public static final String HELD_BACK = "dlock.acquire.held.back";
    /** The local queue gauge's name. */
    public static final String QUEUE = "dlock.queue.local";
    /** The active-leases gauge's name. */
    public static final String ACTIVE = "dlock.leases.active";

    private final MeterRegistry registry;
    private final NamePatterns patterns;
    private final Map<String, Meters> meters = new HashMap<>();

    private record Meters(
            Timer granted,
            Timer timeout,
            Timer rejected,
            Timer failed,
            Timer held,
            Counter lostDeadline,
            Counter lostRevoked,
            Counter lostOther,
            Counter heldBack,
            AtomicInteger queued) {}

    private MicrometerLockListener(Builder builder) {
        this.registry = builder.registry;
        this.patterns = new NamePatterns(builder.namePatterns);
        for (String tag : patterns.tags()) {
            AtomicInteger queued = new AtomicInteger();
            Gauge.builder(QUEUE, queued, q -> Math.max(0, q.get()))
                    .description("Callers of this client waiting for a lock now")
                    .tag("name", tag)
                    .register(registry);
            meters.put(
                    tag,
                    new Meters(
                            acquire(builder, tag, "granted"),
                            acquire(builder, tag, "timeout"),
                            acquire(builder, tag, "rejected"),
                            acquire(builder, tag, "failed"),
                            Timer.builder(HELD)
                                    .description("How long leases were held until released")
                                    .tag("name", tag)
                                    .publishPercentileHistogram(builder.histograms)
                                    .minimumExpectedValue(Duration.ofMillis(1))
                                    .maximumExpectedValue(Duration.ofHours(1))
                                    .register(registry),
                            lostCounter(tag, "deadline"),
                            lostCounter(tag, "revoked"),
                            lostCounter(tag, "other"),
                            Counter.builder(HELD_BACK)
                                    .description("Store answers that held a grant back after the store may have lost"
                                            + " state")
                                    .tag("name", tag)
                                    .register(registry),
                            queued));
        }
    }

    private Timer acquire(Builder builder, String tag, String outcome) {
        return Timer.builder(ACQUIRE)
                .description("Time from asking for a lock to its grant, or to giving up")
                .tag("name", tag)
                .tag("outcome", outcome)
                .publishPercentileHistogram(builder.histograms)
                .minimumExpectedValue(Duration.ofMillis(1))
                .maximumExpectedValue(Duration.ofMinutes(10))
                .register(registry);
    }

    private Counter lostCounter(String tag, String reason) {
        return Counter.builder(LOST)
                .description("Leases lost while held")
                .tag("name", tag)
                .tag("reason", reason)
                .register(registry);
    }

    /**
     * Starts a builder.
     *
     * @param registry where the meters go
     * @return a builder
     */
    public static Builder builder(MeterRegistry registry) {
        return new Builder(registry);
    }

    /**
     * Registers the {@value #ACTIVE} gauges, read from {@link LockClient#heldLeases()} when the registry is
     * scraped (exact even when a release failed). Call once per client; the gauges keep the client
     * reachable until they are removed from the registry.
     *
     * @param client the client this listener was given to
     */
    public void bindActiveLeases(LockClient client) {
        Objects.requireNonNull(client, "client");
        for (String tag : patterns.tags()) {
            Gauge.builder(ACTIVE, client, c -> active(c, tag))
                    .description("Leases this client holds now")
                    .tag("name", tag)
                    .strongReference(true)
                    .register(registry);
        }
    }

    private double active(LockClient client, String tag) {
        int n = 0;
        for (Lease lease : client.heldLeases()) {
            if (patterns.tagOf(lease.name()).equals(tag)) {
                n++;
            }
        }
        return n;
    }

    private Meters of(String name) {
        return meters.get(patterns.tagOf(name));
    }

    @Override
    public void acquired(String name, Duration waited) {
        of(name).granted().record(waited);
    }

    @Override
    public void failed(String name, Duration waited, Throwable cause) {
        Meters m = of(name);
        (cause instanceof LockTimeoutException ? m.timeout() : m.failed()).record(waited);
    }

    @Override
    public void rejected(String name) {
        of(name).rejected().record(Duration.ZERO);
    }

    @Override
    public void released(String name, Duration held) {
        of(name).held().record(held);
    }

    @Override
    public void lost(String name, String reason) {
        Meters m = of(name);
        String why = reason == null ? "" : reason;
        (why.contains("deadline") ? m.lostDeadline() : why.contains("no longer held") ? m.lostRevoked() : m.lostOther())
                .increment();
    }

    @Override
    public void heldBack(String name, Duration left) {
        of(name).heldBack().increment();
    }

    @Override
    public void queued(String name) {
        of(name).queued().incrementAndGet();
    }

    @Override
    public void dequeued(String name) {
        of(name).queued().decrementAndGet();
    }

    /** Options of a {@link MicrometerLockListener}. */
    public static final class Builder {
        private final MeterRegistry registry;
        private List<String> namePatterns = List.of();
        private boolean histograms = true;

        private Builder(MeterRegistry registry) {
            this.registry = Objects.requireNonNull(registry, "registry");
        }

        /**
         * The patterns lock names are grouped by in the {@code name} tag, in matching order; names that
         * match none are tagged {@code other}. Default: none (every name is {@code other}).
         *
         * @param patterns glob patterns such as {@code invoice:*}
         * @return this builder
         * @throws IllegalArgumentException for an empty pattern
         */
        public Builder namePatterns(List<String> patterns) {
            Objects.requireNonNull(patterns, "patterns");
            new NamePatterns(patterns);
            this.namePatterns = List.copyOf(patterns);
            return this;
        }

        /**
         * Whether the timers publish histogram buckets (for percentiles across instances, e.g. Prometheus'
         * {@code histogram_quantile}). Default true.
         *
         * @param enabled false for count, sum and max only
         * @return this builder
         */
        public Builder histograms(boolean enabled) {
            this.histograms = enabled;
            return this;
        }

        /**
         * Registers the meters.
         *
         * @return the listener
         */
        public MicrometerLockListener build() {
            return new MicrometerLockListener(this);
        }
    }
}
