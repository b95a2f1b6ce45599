package dev.dlock.bench;

import dev.dlock.testsupport.TcpProxy;
import java.io.IOException;
import java.lang.management.ManagementFactory;
import java.util.ArrayList;
import java.util.List;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.atomic.AtomicLong;
import java.util.function.Supplier;

/**
 * The held scenario for one system: one client acquires N locks (each its own name) on one thread, holds
 * them all for a while with renewal on, then releases them.
 *
 * <p>Measured: the latency of each acquisition; the heap retained by the holding (used heap after a full
 * GC, held minus before); live threads added while holding; and the requests the holding client sends to
 * its store per second while it only holds (its renewal traffic), counted on the wire by a {@link
 * TcpProxy} (counting requests) between that client and the store. For the in-memory backend there is no wire; the
 * engine's calls into the backend are counted instead ({@link CountingBackend}). At the end of the hold a
 * second client tries to take a sample of the names: any success means a lease was lost while held and
 * counts as a violation.
 *
 * <p>Failure modes: an exception ends the scenario for this system and is reported; the clients and the
 * proxy are closed in every case.
 */
final class HeldRunner {
    private static final int CHECK_SAMPLE = 100;

    /** The results.json row plus the figures that do not fit its fields. */
    record Held(Row row, int leases, double heapMb, int addedThreads, long renewCalls, double acquireSeconds) {}

    private HeldRunner() {}

    static Held run(LockSystem system, Endpoints direct, int leases, long holdNanos, String name) throws Exception {
        String backend = system.backend();
        CountingBackend.Counters counters = new CountingBackend.Counters();
        LockSystem measured =
                system instanceof DlockSystem dlock ? dlock.decorated(b -> new CountingBackend(b, counters)) : system;
        boolean onWire = !backend.equals("mem");
        AtomicLong requests = new AtomicLong();
        TcpProxy proxy = onWire ? countingProxy(direct.of(backend), Framers.forBackend(backend), requests) : null;
        List<AutoCloseable> toClose = new ArrayList<>();
        try {
            Endpoints viaProxy =
                    onWire ? direct.with(backend, new Endpoints.HostPort("127.0.0.1", proxy.port())) : direct;
            LockSystem.Client holder = measured.open(viaProxy, 1, true);
            toClose.add(holder);
            LockSystem.Client checker = system.open(direct, 1, false);
            toClose.add(checker);

            long heapBefore = usedHeapAfterGc();
            int threadsBefore = liveThreads();
            Latencies latencies = new Latencies();
            List<LockSystem.BenchLock> held = new ArrayList<>(leases);
            long acquireStart = System.nanoTime();
            for (int i = 0; i < leases; i++) {
                LockSystem.BenchLock lock = holder.lock(name + "-" + i);
                long t0 = System.nanoTime();
                lock.lock();
                latencies.add(System.nanoTime() - t0);
                held.add(lock);
            }
            double acquireSeconds = (System.nanoTime() - acquireStart) / 1e9;

            long commandsBefore = onWire ? requests.get() : counters.calls();
            long renewBefore = counters.renewCalls.sum();
            long holdStart = System.nanoTime();
            TimeUnit.NANOSECONDS.sleep(holdNanos);
            double holdSeconds = (System.nanoTime() - holdStart) / 1e9;
            long commands = (onWire ? requests.get() : counters.calls()) - commandsBefore;
            long renewCalls = counters.renewCalls.sum() - renewBefore;
            int addedThreads = liveThreads() - threadsBefore;
            long heapHeld = usedHeapAfterGc();

            long violations = 0;
            int step = Math.max(1, leases / CHECK_SAMPLE);
            for (int i = 0; i < leases; i += step) {
                LockSystem.BenchLock other = checker.lock(name + "-" + i);
                if (other.tryLock()) {
                    violations++;
                    other.unlock();
                }
            }
            for (LockSystem.BenchLock lock : held) {
                lock.unlock();
            }
            Row row = new Row(
                    Scenario.HELD.label(),
                    system.name(),
                    backend,
                    1,
                    1,
                    round(holdSeconds, 2),
                    round(commands / holdSeconds, 2),
                    round(latencies.percentileMicros(50), 1),
                    round(latencies.percentileMicros(99), 1),
                    violations,
                    List.of());
            double heapMb = (heapHeld - heapBefore) / (1024.0 * 1024.0);
            return new Held(row, leases, round(heapMb, 2), addedThreads, renewCalls, round(acquireSeconds, 2));
        } finally {
            CellRunner.closeAll(toClose);
            if (proxy != null) {
                proxy.close();
            }
        }
    }

    static double round(double value, int decimals) {
        double scale = Math.pow(10, decimals);
        return Math.round(value * scale) / scale;
    }

    private static long usedHeapAfterGc() throws InterruptedException {
        for (int i = 0; i < 2; i++) {
            System.gc();
            Thread.sleep(50);
        }
        return ManagementFactory.getMemoryMXBean().getHeapMemoryUsage().getUsed();
    }

    /** A proxy that counts the requests clients send through it, as the store's framing delimits them. */
    private static TcpProxy countingProxy(
            Endpoints.HostPort target, Supplier<Framers.Framer> framers, AtomicLong requests) throws IOException {
        return TcpProxy.start(target.host(), target.port(), () -> {
            Framers.Framer framer = framers.get();
            return (buffer, offset, length) -> requests.addAndGet(framer.feed(buffer, offset, length));
        });
    }

    /** Live threads, without the counting proxy's own. */
    private static int liveThreads() {
        int n = 0;
        for (Thread t : Thread.getAllStackTraces().keySet()) {
            if (t.isAlive() && !t.getName().startsWith(TcpProxy.THREAD_PREFIX)) {
                n++;
            }
        }
        return n;
    }
}
