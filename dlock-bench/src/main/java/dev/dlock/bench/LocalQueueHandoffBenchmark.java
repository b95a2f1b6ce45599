package dev.dlock.bench;

import dev.dlock.DistributedLock;
import dev.dlock.LockClient;
import dev.dlock.spi.LockBackendProvider;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.locks.ReentrantLock;
import org.openjdk.jmh.annotations.AuxCounters;
import org.openjdk.jmh.annotations.Benchmark;
import org.openjdk.jmh.annotations.BenchmarkMode;
import org.openjdk.jmh.annotations.Fork;
import org.openjdk.jmh.annotations.Level;
import org.openjdk.jmh.annotations.Measurement;
import org.openjdk.jmh.annotations.Mode;
import org.openjdk.jmh.annotations.OutputTimeUnit;
import org.openjdk.jmh.annotations.Scope;
import org.openjdk.jmh.annotations.Setup;
import org.openjdk.jmh.annotations.State;
import org.openjdk.jmh.annotations.TearDown;
import org.openjdk.jmh.annotations.Threads;
import org.openjdk.jmh.annotations.Warmup;

/**
 * The engine's local queue hand-off: four threads of one client take turns on one lock name, so every
 * release hands the lock to a caller waiting in the client's local queue. The in-memory backend answers
 * at once, so the figure is the engine's own cost (queueing, wake-up, thread hand-off). {@code
 * storeAcquiresPerOp} shows that waiting threads do not ask the store: it stays near one per lock.
 *
 * <p>Run: {@code scripts/bench.sh --jmh LocalQueueHandoffBenchmark} (add JMH options such as {@code -f 1
 * -wi 3 -i 5} as needed). {@code jdkReentrantLock} is the same loop on a {@link ReentrantLock}, for scale.
 */
@BenchmarkMode(Mode.Throughput)
@OutputTimeUnit(TimeUnit.SECONDS)
@Warmup(iterations = 3, time = 2)
@Measurement(iterations = 5, time = 2)
@Fork(1)
@Threads(4)
public class LocalQueueHandoffBenchmark {
    /** For JMH, which instantiates it. */
    public LocalQueueHandoffBenchmark() {}

    /** One client and one lock name shared by all benchmark threads. */
    @State(Scope.Benchmark)
    public static class Shared {
        /** For JMH, which instantiates it. */
        public Shared() {}

        final CountingBackend.Counters counters = new CountingBackend.Counters();
        final ReentrantLock jdkLock = new ReentrantLock();
        LockClient client;
        DistributedLock lock;
        long counter;

        /** Opens the client. */
        @Setup(Level.Trial)
        public void open() {
            client = LockClient.builder(LockBackendProvider.factoryFor("mem:jmh-handoff")
                            .andThen(b -> new CountingBackend(b, counters)))
                    .build();
            lock = client.lock("handoff");
        }

        /** Closes the client. */
        @TearDown(Level.Trial)
        public void close() {
            client.close();
        }
    }

    /** Store acquisitions per completed lock, reported next to the throughput. */
    @State(Scope.Thread)
    @AuxCounters(AuxCounters.Type.EVENTS)
    public static class Calls {
        /** For JMH, which instantiates it. */
        public Calls() {}

        /** Completed lock/unlock cycles of this thread. */
        public long cycles;

        /** Store acquire calls during the iteration (all threads). */
        public long storeAcquires;

        private long acquiresAtStart;

        /**
         * Starts counting.
         *
         * @param shared the client whose calls are counted
         */
        @Setup(Level.Iteration)
        public void start(Shared shared) {
            cycles = 0;
            acquiresAtStart = shared.counters.acquires.sum();
        }

        /**
         * Stops counting.
         *
         * @param shared the client whose calls are counted
         */
        @TearDown(Level.Iteration)
        public void stop(Shared shared) {
            storeAcquires = shared.counters.acquires.sum() - acquiresAtStart;
        }
    }

    /**
     * One lock/unlock cycle through the engine.
     *
     * @param shared the lock
     * @param calls counters
     */
    @Benchmark
    public void dlockLocalHandoff(Shared shared, Calls calls) {
        shared.lock.lock();
        try {
            shared.counter++;
        } finally {
            shared.lock.unlock();
        }
        calls.cycles++;
    }

    /**
     * The same cycle on a JDK lock.
     *
     * @param shared the lock
     */
    @Benchmark
    public void jdkReentrantLock(Shared shared) {
        shared.jdkLock.lock();
        try {
            shared.counter++;
        } finally {
            shared.jdkLock.unlock();
        }
    }
}
