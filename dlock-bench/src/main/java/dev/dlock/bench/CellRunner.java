package dev.dlock.bench;

import java.util.ArrayList;
import java.util.List;
import java.util.concurrent.CountDownLatch;
import java.util.concurrent.ExecutionException;
import java.util.concurrent.ExecutorService;
import java.util.concurrent.Executors;
import java.util.concurrent.Future;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.atomic.AtomicInteger;
import java.util.concurrent.atomic.AtomicReference;
import java.util.concurrent.locks.LockSupport;

/**
 * Runs one lock scenario ({@code uncontended}, {@code distinct}, {@code contended}, {@code handoff}) for one
 * system once: opens the clients, runs every thread's loop through a warm-up and a fixed measuring window,
 * closes the clients.
 *
 * <p>The loop: lock, critical section, unlock. The critical section increments a plain (non-atomic)
 * counter of its lock name and checks an "inside" count; a second thread inside at once, or a counter
 * that ends below the number of completed cycles, is a violation. A cycle counts when it completes inside
 * the measuring window.
 *
 * <p>Hand-off: each of the eight clients has one thread. After a release, the releasing thread steps aside
 * until another client has entered, so every entry is a hand-off to a waiter; its latency runs from just
 * before the previous holder's unlock call to the entry.
 *
 * <p>Concurrency: each worker records into its own {@link Latencies}; results are merged after the
 * workers have been joined. Failure modes: the first exception of any worker stops every worker and is
 * reported as the cell's error; workers still running 20 s after the window are interrupted and
 * reported.
 */
final class CellRunner {
    private static final long GRACE_NANOS = TimeUnit.SECONDS.toNanos(20);
    private static final long SETTLE_NANOS = TimeUnit.MILLISECONDS.toNanos(50);

    /** What one run of a cell measured. */
    record Measurement(
            long ops, long measuredNanos, Latencies latencies, long violations, String error, long[] perClient) {}

    private CellRunner() {}

    /** The state of one lock name: who is inside, a plain counter, the last release for hand-offs. */
    private static final class Guard {
        final AtomicInteger inside = new AtomicInteger();
        long counter; // deliberately plain: lost updates reveal overlapping holders
        volatile long releasedAt;
        volatile int holder = -1;
    }

    /** Per worker thread. */
    private static final class Worker {
        final int index;
        final Guard guard;
        final LockSystem.BenchLock lock;
        final Latencies latencies = new Latencies();
        long cycles; // all completed cycles, warm-up included, to check the counter
        long measured;
        long overlaps;

        Worker(int index, Guard guard, LockSystem.BenchLock lock) {
            this.index = index;
            this.guard = guard;
            this.lock = lock;
        }
    }

    static Measurement run(
            Scenario scenario, LockSystem system, Endpoints endpoints, long warmupNanos, long measureNanos, String name)
            throws Exception {
        List<LockSystem.Client> clients = new ArrayList<>();
        try {
            openAll(system, endpoints, scenario, clients);
            return measure(scenario, clients, warmupNanos, measureNanos, name);
        } finally {
            closeAll(clients);
        }
    }

    /** Opens the scenario's clients concurrently (some libraries take a while to connect). */
    private static void openAll(
            LockSystem system, Endpoints endpoints, Scenario scenario, List<LockSystem.Client> clients)
            throws Exception {
        ExecutorService openers = Executors.newFixedThreadPool(scenario.clients, r -> {
            Thread t = new Thread(r, "bench-open");
            t.setDaemon(true);
            return t;
        });
        try {
            List<Future<LockSystem.Client>> opening = new ArrayList<>();
            for (int c = 0; c < scenario.clients; c++) {
                opening.add(openers.submit(() -> system.open(endpoints, scenario.threads, false)));
            }
            Exception failure = null;
            for (Future<LockSystem.Client> f : opening) {
                try {
                    clients.add(f.get());
                } catch (ExecutionException e) {
                    failure = e.getCause() instanceof Exception cause ? cause : e;
                }
            }
            if (failure != null) {
                throw failure;
            }
        } finally {
            openers.shutdown();
        }
    }

    private static Measurement measure(
            Scenario scenario, List<LockSystem.Client> clients, long warmupNanos, long measureNanos, String name)
            throws Exception {
        int threads = scenario.clients * scenario.threads;
        List<Worker> workers = new ArrayList<>();
        List<Guard> guards = new ArrayList<>();
        Guard shared = new Guard();
        for (int i = 0; i < threads; i++) {
            Guard guard = shared;
            String lockName = name;
            if (scenario == Scenario.DISTINCT) {
                guard = new Guard();
                lockName = name + "-t" + i;
            }
            if (!guards.contains(guard)) {
                guards.add(guard);
            }
            workers.add(new Worker(i, guard, clients.get(i / scenario.threads).lock(lockName)));
        }
        AtomicReference<Throwable> failure = new AtomicReference<>();
        CountDownLatch ready = new CountDownLatch(threads);
        long[] window = new long[2];
        CountDownLatch go = new CountDownLatch(1);
        List<Thread> running = new ArrayList<>();
        for (Worker w : workers) {
            Thread t = new Thread(
                    () -> {
                        ready.countDown();
                        try {
                            go.await();
                            if (scenario == Scenario.HANDOFF) {
                                handoffLoop(w, window[0], window[1], failure);
                            } else {
                                cycleLoop(w, window[0], window[1], failure);
                            }
                        } catch (Throwable e) {
                            failure.compareAndSet(null, e);
                        }
                    },
                    "bench-worker-" + w.index);
            t.setDaemon(true);
            running.add(t);
            t.start();
        }
        ready.await();
        long start = System.nanoTime() + SETTLE_NANOS;
        window[0] = start + warmupNanos;
        window[1] = window[0] + measureNanos;
        go.countDown();
        String error = null;
        for (Thread t : running) {
            long left = window[1] + GRACE_NANOS - System.nanoTime();
            t.join(Math.max(1, TimeUnit.NANOSECONDS.toMillis(left)));
            if (t.isAlive()) {
                error = "a worker was still waiting for the lock 20 s after the measuring window; interrupted";
                failure.compareAndSet(null, new IllegalStateException(error));
            }
        }
        if (error != null) {
            running.forEach(Thread::interrupt);
        }
        Throwable first = failure.get();
        if (first != null && error == null) {
            error = first.toString();
        }
        Latencies all = new Latencies();
        long ops = 0;
        long violations = 0;
        long[] perClient = new long[scenario == Scenario.HANDOFF ? 0 : scenario.clients];
        for (Worker w : workers) {
            all.addAll(w.latencies);
            ops += w.measured;
            violations += w.overlaps;
            if (perClient.length > 0) {
                perClient[w.index / scenario.threads] += w.measured;
            }
        }
        for (Guard g : guards) {
            long expected = 0;
            for (Worker w : workers) {
                if (w.guard == g) {
                    expected += w.cycles;
                }
            }
            violations += Math.abs(expected - g.counter);
        }
        return new Measurement(ops, measureNanos, all, violations, error, perClient);
    }

    private static void cycleLoop(Worker w, long measureStart, long measureEnd, AtomicReference<Throwable> failure)
            throws Exception {
        Guard g = w.guard;
        while (failure.get() == null) {
            long t0 = System.nanoTime();
            if (t0 - measureEnd >= 0) {
                return;
            }
            w.lock.lock();
            try {
                criticalSection(w, g);
            } finally {
                w.lock.unlock();
            }
            long t1 = System.nanoTime();
            if (t1 - measureStart >= 0 && t1 - measureEnd < 0) {
                w.measured++;
                w.latencies.add(t1 - t0);
            }
        }
    }

    private static void handoffLoop(Worker w, long measureStart, long measureEnd, AtomicReference<Throwable> failure)
            throws Exception {
        Guard g = w.guard;
        while (failure.get() == null && System.nanoTime() - measureEnd < 0) {
            w.lock.lock();
            long entered = System.nanoTime();
            try {
                int previous = g.holder;
                g.holder = w.index;
                if (previous != -1 && previous != w.index && entered - measureStart >= 0 && entered - measureEnd < 0) {
                    w.measured++;
                    w.latencies.add(entered - g.releasedAt);
                }
                criticalSection(w, g);
                g.releasedAt = System.nanoTime();
            } finally {
                w.lock.unlock();
            }
            // Step aside until another client has taken over, so the next entry is a real hand-off.
            while (g.holder == w.index && failure.get() == null && System.nanoTime() - measureEnd < 0) {
                LockSupport.parkNanos(20_000);
            }
        }
    }

    private static void criticalSection(Worker w, Guard g) {
        if (g.inside.getAndIncrement() != 0) {
            w.overlaps++;
        }
        g.counter++;
        w.cycles++;
        g.inside.decrementAndGet();
    }

    /** Closes clients concurrently (some libraries take a while), waiting for all of them. */
    static void closeAll(List<? extends AutoCloseable> clients) {
        List<Thread> closers = new ArrayList<>();
        for (AutoCloseable client : clients) {
            Thread t = new Thread(
                    () -> {
                        try {
                            client.close();
                        } catch (Exception e) {
                            System.err.println("[bench] closing a client failed: " + e);
                        }
                    },
                    "bench-close");
            t.start();
            closers.add(t);
        }
        for (Thread t : closers) {
            try {
                t.join(TimeUnit.SECONDS.toMillis(30));
            } catch (InterruptedException e) {
                Thread.currentThread().interrupt();
                return;
            }
        }
    }
}
