package dev.dlock.internal;

import dev.dlock.internal.base.Timebase;
import java.util.ArrayList;
import java.util.List;
import java.util.PriorityQueue;
import java.util.concurrent.AbstractExecutorService;
import java.util.concurrent.Callable;
import java.util.concurrent.Delayed;
import java.util.concurrent.FutureTask;
import java.util.concurrent.RejectedExecutionException;
import java.util.concurrent.ScheduledExecutorService;
import java.util.concurrent.ScheduledFuture;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.atomic.AtomicLong;

/**
 * A time the test moves: the engine's clock and scheduler for the model checker, with no thread of its
 * own. Each reading of the clock is one nanosecond after the last one (of any thread), so readings order
 * the engine's events as on a real clock (a waiter that asked before a hold's last confirmation), and a
 * run that repeats an interleaving reads the same times; {@link #advance} jumps ahead (a lease past its
 * deadline, a store call past its timeout). Timers run only when the test calls {@link #runDue}, on the
 * calling thread, in the order they fall due: a scheduler that is late by as much as the test likes.
 *
 * <p>One per engine, so nothing here is static: Lincheck restores static fields between its runs.
 */
final class ManualTime implements Timebase {
    private final AtomicLong now = new AtomicLong();
    private final Scheduler scheduler = new Scheduler();

    @Override
    public long nanoTime() {
        return now.incrementAndGet();
    }

    @Override
    public ScheduledExecutorService newScheduler(int client) {
        return scheduler;
    }

    /** Moves the clock {@code nanos} ahead, running no timer. */
    void advance(long nanos) {
        now.addAndGet(nanos);
    }

    /** Runs every timer due now, earliest first, including those the ones run schedule for now or earlier. */
    void runDue() {
        Task task;
        while ((task = scheduler.takeDue(now.get())) != null) {
            task.run();
        }
    }

    /** A timer: runs once, unless cancelled first. */
    private final class Task extends FutureTask<Void> implements ScheduledFuture<Void> {
        final long dueNanos;
        final long seq;

        Task(Runnable task, long dueNanos, long seq) {
            super(task, null);
            this.dueNanos = dueNanos;
            this.seq = seq;
        }

        @Override
        public long getDelay(TimeUnit unit) {
            return unit.convert(dueNanos - now.get(), TimeUnit.NANOSECONDS);
        }

        @Override
        public int compareTo(Delayed other) {
            Task o = (Task) other;
            int byDue = Long.compare(dueNanos, o.dueNanos);
            return byDue != 0 ? byDue : Long.compare(seq, o.seq);
        }

        @Override
        public boolean cancel(boolean mayInterrupt) {
            boolean cancelled = super.cancel(mayInterrupt);
            scheduler.remove(this);
            return cancelled;
        }
    }

    /** The timers in due order; rejects new ones once shut down, as a closed client's scheduler does. */
    private final class Scheduler extends AbstractExecutorService implements ScheduledExecutorService {
        private final PriorityQueue<Task> timers = new PriorityQueue<>();
        private long seq;
        private boolean shutdown;

        synchronized Task takeDue(long nowNanos) {
            Task first = timers.peek();
            if (first == null || first.dueNanos - nowNanos > 0) {
                return null;
            }
            return timers.poll();
        }

        synchronized void remove(Task task) {
            timers.remove(task);
        }

        @Override
        public ScheduledFuture<?> schedule(Runnable command, long delay, TimeUnit unit) {
            long due = now.get() + Math.max(0, unit.toNanos(delay));
            synchronized (this) {
                if (shutdown) {
                    throw new RejectedExecutionException("the client is closed");
                }
                Task task = new Task(command, due, seq++);
                timers.add(task);
                return task;
            }
        }

        @Override
        public void execute(Runnable command) {
            schedule(command, 0, TimeUnit.NANOSECONDS);
        }

        @Override
        public synchronized void shutdown() {
            shutdown = true;
        }

        @Override
        public synchronized List<Runnable> shutdownNow() {
            shutdown = true;
            List<Runnable> left = new ArrayList<>(timers);
            timers.clear();
            return left;
        }

        @Override
        public synchronized boolean isShutdown() {
            return shutdown;
        }

        @Override
        public synchronized boolean isTerminated() {
            return shutdown;
        }

        @Override
        public boolean awaitTermination(long timeout, TimeUnit unit) {
            return isShutdown();
        }

        @Override
        public <V> ScheduledFuture<V> schedule(Callable<V> callable, long delay, TimeUnit unit) {
            throw new UnsupportedOperationException("the engine schedules Runnables only");
        }

        @Override
        public ScheduledFuture<?> scheduleAtFixedRate(Runnable command, long initialDelay, long period, TimeUnit unit) {
            throw new UnsupportedOperationException("the engine schedules one-shot timers only");
        }

        @Override
        public ScheduledFuture<?> scheduleWithFixedDelay(
                Runnable command, long initialDelay, long delay, TimeUnit unit) {
            throw new UnsupportedOperationException("the engine schedules one-shot timers only");
        }
    }
}
