package dev.dlock.spring;

import dev.dlock.LockListener;
import dev.dlock.LockTimeoutException;
import io.micrometer.core.instrument.Counter;
import io.micrometer.core.instrument.MeterRegistry;
import io.micrometer.core.instrument.Timer;
import java.time.Duration;
import java.util.HashMap;
import java.util.Map;

/**
 * Records lock events as Micrometer meters, each tagged {@code name} with the lock name's pattern (see
 * {@link NamePatterns}), so the number of meters is bounded by the configuration, not by the lock names:
 *
 * <ul>
 *   <li>{@code dlock.acquire} (timer, tag {@code outcome}: acquired, timeout, failed): how long callers
 *       waited, until the grant or until they gave up;
 *   <li>{@code dlock.held} (timer): how long leases were held until released;
 *   <li>{@code dlock.leases.lost} (counter): leases lost while held;
 *   <li>{@code dlock.rejected} (counter): callers turned away by the local queue limit.
 * </ul>
 *
 * <p>The number of active leases is a gauge registered separately ({@link ActiveLeaseGauges}), as it
 * needs the client this listener is given to.
 *
 * <p>Concurrency: all meters are created up front; recording is thread-safe in Micrometer.
 */
final class MicrometerLockListener implements LockListener {
    private final NamePatterns patterns;
    private final Map<String, Meters> meters = new HashMap<>();

    private record Meters(Timer acquired, Timer timedOut, Timer failed, Timer held, Counter lost, Counter rejected) {}

    MicrometerLockListener(MeterRegistry registry, NamePatterns patterns) {
        this.patterns = patterns;
        for (String tag : patterns.tags()) {
            meters.put(
                    tag,
                    new Meters(
                            acquireTimer(registry, tag, "acquired"),
                            acquireTimer(registry, tag, "timeout"),
                            acquireTimer(registry, tag, "failed"),
                            Timer.builder("dlock.held")
                                    .description("How long leases were held until released")
                                    .tag("name", tag)
                                    .register(registry),
                            Counter.builder("dlock.leases.lost")
                                    .description("Leases lost while held (renewal refused or failed, session lost)")
                                    .tag("name", tag)
                                    .register(registry),
                            Counter.builder("dlock.rejected")
                                    .description("Callers turned away because the local queue limit was reached")
                                    .tag("name", tag)
                                    .register(registry)));
        }
    }

    private static Timer acquireTimer(MeterRegistry registry, String tag, String outcome) {
        return Timer.builder("dlock.acquire")
                .description("Time from asking for a lock to its grant, or to giving up")
                .tag("name", tag)
                .tag("outcome", outcome)
                .register(registry);
    }

    private Meters of(String name) {
        return meters.get(patterns.tagOf(name));
    }

    @Override
    public void acquired(String name, Duration waited) {
        of(name).acquired().record(waited);
    }

    @Override
    public void failed(String name, Duration waited, Throwable cause) {
        Meters m = of(name);
        (cause instanceof LockTimeoutException ? m.timedOut() : m.failed()).record(waited);
    }

    @Override
    public void rejected(String name) {
        of(name).rejected().increment();
    }

    @Override
    public void released(String name, Duration held) {
        of(name).held().record(held);
    }

    @Override
    public void lost(String name, String reason) {
        of(name).lost().increment();
    }
}
