package dev.dlock.internal.base;

import java.util.concurrent.atomic.AtomicLong;

/**
 * The engine's one reading of elapsed time, for deadlines and for ordering its own events (a waiter that
 * asked before a hold was last confirmed may be handed that hold).
 *
 * <p>Design: {@link System#nanoTime()}, except in a JVM where {@code dlock.test.tickingClock} is set before
 * this class loads, to a thread name prefix: there a reading by a thread whose name starts with it is the
 * last reading + 1, from 1 after {@link #restartTicks()}, and any other thread (a client's scheduler, a
 * thread closing clients beside the checker) reads the last value without moving it, so that only the
 * checked threads' steps, which the checker replays, decide the times. That mode exists for the model
 * checker (Lincheck answers every {@code System.nanoTime()} with one constant, so no event would ever come
 * after another and no hold would be handed on): time then only orders the engine's events, no deadline of
 * a test's size is reached (a 30 s lease lasts 30 billion readings), and a run that repeats an
 * interleaving reads the same times. Only the memory store suits that mode: session stores hand the engine
 * {@code System.nanoTime()} readings ({@code SessionLeases}). The choice is a constant read once, so the
 * JIT folds it away.
 *
 * <p>Concurrency: thread-safe. Failure modes: none.
 */
public final class Nanos {
    /** The name prefix of the threads whose readings move the ticking clock, or null for the system clock. */
    private static final String TICKERS = System.getProperty("dlock.test.tickingClock");

    private static final boolean TICKING = TICKERS != null;
    private static final AtomicLong TICKS = new AtomicLong();

    private Nanos() {}

    /** {@return now, in nanoseconds from an arbitrary origin (ticks in the test mode)} */
    public static long now() {
        return TICKING ? tick() : System.nanoTime();
    }

    private static long tick() {
        return Thread.currentThread().getName().startsWith(TICKERS) ? TICKS.incrementAndGet() : TICKS.get();
    }

    /**
     * Test mode only: the next reading is 1 again (the model checker calls it before each run).
     *
     * @throws IllegalStateException without the test mode
     */
    public static void restartTicks() {
        if (!TICKING) {
            throw new IllegalStateException(
                    "the ticking clock is off: set dlock.test.tickingClock before the engine's first use");
        }
        TICKS.set(0);
    }

    /** {@return whether this JVM runs the ticking test clock} */
    public static boolean ticking() {
        return TICKING;
    }
}
