package dev.dlock.internal.store;

import java.util.concurrent.CompletableFuture;
import java.util.concurrent.ScheduledFuture;
import java.util.concurrent.TimeUnit;
import java.util.function.BiFunction;
import java.util.function.BooleanSupplier;
import java.util.function.Supplier;

/**
 * Calls that end something at the store (a release, a give-back, a queue exit), sent again until the
 * store answers them, whatever it answers, or the client closes.
 *
 * <p>Why: a store whose holds and queue entries are bound to a session or a keep-alive (ZooKeeper, etcd,
 * an advisory lock) keeps them while that session lives, which may be far longer than the lease time, so
 * one failed call (a connection lost at that moment) would keep the lock from everyone for that long; for
 * a store that expires them by itself the extra tries are useless but harmless: each names an owner id
 * the engine never uses again.
 *
 * <p>Bounds: the first try after a tenth of the lease time (50 ms to 1 s), then the delay doubles up to
 * 1 s; one try on its way at a time, each bounded by the operation timeout, so an outage costs at most one
 * request a second per unconfirmed call.
 */
final class Retries {
    private static final long MIN_NANOS = TimeUnit.MILLISECONDS.toNanos(50);
    private static final long MAX_NANOS = TimeUnit.SECONDS.toNanos(1);

    private final BiFunction<Runnable, Long, ScheduledFuture<?>> schedule;
    private final BooleanSupplier closed;

    /** Retries on the client's scheduler ({@code schedule(task, delayNanos)}) until it is {@code closed}. */
    Retries(BiFunction<Runnable, Long, ScheduledFuture<?>> schedule, BooleanSupplier closed) {
        this.schedule = schedule;
        this.closed = closed;
    }

    /** The first back-off: a tenth of the lease time, 50 ms to 1 s. */
    static long firstDelayNanos(long leaseMillis) {
        return Math.max(MIN_NANOS, Math.min(MAX_NANOS, TimeUnit.MILLISECONDS.toNanos(leaseMillis) / 10));
    }

    /**
     * Sends {@code call} again after {@code delayNanos}, and again, doubling the delay, until the store
     * answers it or the client closes.
     *
     * @param answered runs once the store answered; null for nothing
     */
    void untilAnswered(Supplier<CompletableFuture<?>> call, long delayNanos, Runnable answered) {
        if (closed.getAsBoolean()) {
            return;
        }
        schedule.apply(
                () -> {
                    if (closed.getAsBoolean()) {
                        return;
                    }
                    call.get().whenComplete((v, error) -> {
                        if (error != null) {
                            untilAnswered(call, Math.min(MAX_NANOS, 2 * delayNanos), answered);
                        } else if (answered != null) {
                            answered.run();
                        }
                    });
                },
                delayNanos);
    }
}
