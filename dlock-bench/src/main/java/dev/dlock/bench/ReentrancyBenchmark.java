package dev.dlock.bench;

import dev.dlock.DistributedLock;
import dev.dlock.LockClient;
import dev.dlock.spi.LockBackendProvider;
import java.util.concurrent.TimeUnit;
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
import org.openjdk.jmh.annotations.Warmup;

/**
 * Reentrancy bookkeeping of the thread-owned {@code Lock} view: the thread already holds the lock, and
 * each operation re-enters and leaves it once. That must cost a map lookup and a counter, never a store
 * call; the tear-down fails the run if any store call was made after the first acquisition.
 *
 * <p>Run: {@code scripts/bench.sh --jmh ReentrancyBenchmark}. {@code isHeldByCurrentThread} measures the
 * ownership lookup alone.
 */
@BenchmarkMode(Mode.AverageTime)
@OutputTimeUnit(TimeUnit.NANOSECONDS)
@Warmup(iterations = 3, time = 2)
@Measurement(iterations = 5, time = 2)
@Fork(1)
@State(Scope.Thread)
public class ReentrancyBenchmark {
    /** For JMH, which instantiates it. */
    public ReentrancyBenchmark() {}

    private final CountingBackend.Counters counters = new CountingBackend.Counters();
    private LockClient client;
    private DistributedLock lock;

    /** Opens the client and takes the lock once (on the benchmark thread). */
    @Setup(Level.Trial)
    public void hold() {
        client = LockClient.builder(LockBackendProvider.factoryFor("mem:jmh-reentrancy")
                        .andThen(b -> new CountingBackend(b, counters)))
                .build();
        lock = client.lock("reentrant-" + Thread.currentThread().getId());
        lock.lock();
    }

    /** Releases and closes; fails if re-entering ever reached the store. */
    @TearDown(Level.Trial)
    public void release() {
        lock.unlock();
        client.close();
        if (counters.acquires.sum() != 1) {
            throw new IllegalStateException(
                    "re-entering made " + (counters.acquires.sum() - 1) + " store acquire calls; expected none");
        }
    }

    /**
     * Re-enters the held lock and leaves it.
     *
     * @return whether the thread still holds it (always true), so the work is not optimised away
     */
    @Benchmark
    public boolean reenterAndLeave() {
        lock.lock();
        lock.unlock();
        return lock.isHeldByCurrentThread();
    }

    /**
     * The ownership lookup alone.
     *
     * @return true
     */
    @Benchmark
    public boolean isHeldByCurrentThread() {
        return lock.isHeldByCurrentThread();
    }
}
