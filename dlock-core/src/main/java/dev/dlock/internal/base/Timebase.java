package dev.dlock.internal.base;

import java.util.concurrent.ScheduledExecutorService;
import java.util.concurrent.ScheduledThreadPoolExecutor;

/**
 * The engine's time: the one clock every deadline, timer delay and ordering of its events is read from,
 * and the scheduler that runs its timers (the watchdog's ticks, wait deadlines, store-call timeouts).
 *
 * <p>Design: a client reads it through a final field of its {@code Store}, so every engine part of one
 * client sees the same time. Production uses {@link #SYSTEM}, the only implementation loaded there: the
 * call site stays monomorphic and the JIT inlines it to {@code System.nanoTime()}. A test of this package
 * may open an engine on its own (the model checker's, which moves the clock and runs due timers itself,
 * on its own threads, so that no engine thread runs beside it). Session stores report their session's
 * bound as a {@code System.nanoTime()} reading ({@code SessionLeases}), so another time suits only stores
 * without sessions, such as the memory store.
 *
 * <p>Concurrency: implementations are thread-safe.
 */
public interface Timebase {
    /** {@code System.nanoTime()}, and one daemon scheduler thread per client. */
    Timebase SYSTEM = new Timebase() {
        @Override
        public long nanoTime() {
            return System.nanoTime();
        }

        @Override
        public ScheduledExecutorService newScheduler(int client) {
            ScheduledThreadPoolExecutor scheduler = new ScheduledThreadPoolExecutor(1, r -> {
                Thread t = new Thread(r, "dlock-scheduler-" + client);
                t.setDaemon(true);
                return t;
            });
            scheduler.setRemoveOnCancelPolicy(true);
            scheduler.setExecuteExistingDelayedTasksAfterShutdownPolicy(false);
            return scheduler;
        }
    };

    /** {@return now, in nanoseconds from an arbitrary origin, as {@code System.nanoTime()}} */
    long nanoTime();

    /**
     * A scheduler for one client's timers; its tasks never block. Shut down when the client closes:
     * after that it rejects new tasks and runs no delayed one.
     *
     * @param client the client's number, for thread names
     * @return the scheduler
     */
    ScheduledExecutorService newScheduler(int client);
}
