package dev.dlock.bench;

import dev.dlock.DistributedLock;
import dev.dlock.Lease;
import dev.dlock.LockClient;
import dev.dlock.spi.LockBackendProvider;
import java.time.Duration;
import java.util.ArrayList;
import java.util.List;
import java.util.concurrent.TimeUnit;
import org.openjdk.jmh.annotations.AuxCounters;
import org.openjdk.jmh.annotations.Benchmark;
import org.openjdk.jmh.annotations.BenchmarkMode;
import org.openjdk.jmh.annotations.Fork;
import org.openjdk.jmh.annotations.Level;
import org.openjdk.jmh.annotations.Measurement;
import org.openjdk.jmh.annotations.Mode;
import org.openjdk.jmh.annotations.OutputTimeUnit;
import org.openjdk.jmh.annotations.Param;
import org.openjdk.jmh.annotations.Scope;
import org.openjdk.jmh.annotations.Setup;
import org.openjdk.jmh.annotations.State;
import org.openjdk.jmh.annotations.TearDown;
import org.openjdk.jmh.annotations.Warmup;

/**
 * Renewal batching: one client holds {@code leases} leases of 900 ms, so the watchdog renews them about
 * every 300 ms, while the benchmark thread locks and unlocks another name. The throughput shows what the
 * background renewal costs the foreground; the counters show the batching: {@code renewCalls} (calls into
 * the backend, one per tick whatever the number of leases) and {@code renewedLeases} per second.
 *
 * <p>Run: {@code scripts/bench.sh --jmh RenewalBatchingBenchmark} (or {@code -p leases=10000} for one
 * size).
 */
@BenchmarkMode(Mode.Throughput)
@OutputTimeUnit(TimeUnit.SECONDS)
@Warmup(iterations = 2, time = 2)
@Measurement(iterations = 5, time = 2)
@Fork(1)
@State(Scope.Benchmark)
public class RenewalBatchingBenchmark {
    /** For JMH, which instantiates it. */
    public RenewalBatchingBenchmark() {}

    /** How many leases are held and renewed in the background. */
    @Param({"0", "1000", "10000"})
    public int leases;

    private final CountingBackend.Counters counters = new CountingBackend.Counters();
    private final List<Lease> held = new ArrayList<>();
    private LockClient client;
    private DistributedLock foreground;

    /** Opens the client and takes the background leases. */
    @Setup(Level.Trial)
    public void hold() {
        client = LockClient.builder(LockBackendProvider.factoryFor("mem:jmh-renewal-" + leases)
                        .andThen(b -> new CountingBackend(b, counters)))
                .leaseTime(Duration.ofMillis(900))
                .build();
        for (int i = 0; i < leases; i++) {
            held.add(client.lock("held-" + i).acquire(Duration.ZERO));
        }
        foreground = client.lock("foreground");
    }

    /** Checks that no lease was lost, then closes. */
    @TearDown(Level.Trial)
    public void release() {
        long lost = held.stream().filter(l -> !l.isValid()).count();
        client.close();
        if (lost > 0) {
            throw new IllegalStateException(lost + " of " + leases + " leases were lost while renewed in batches");
        }
    }

    /** Renewal calls and renewed leases during an iteration, reported per second. */
    @State(Scope.Thread)
    @AuxCounters(AuxCounters.Type.OPERATIONS)
    public static class Renewals {
        /** For JMH, which instantiates it. */
        public Renewals() {}

        /** Calls into {@code LockBackend.renew} (batches). */
        public long renewCalls;

        /** Leases renewed. */
        public long renewedLeases;

        private long callsAtStart;
        private long leasesAtStart;
        private CountingBackend.Counters counters;

        /**
         * Starts counting.
         *
         * @param bench the benchmark whose client is counted
         */
        @Setup(Level.Iteration)
        public void start(RenewalBatchingBenchmark bench) {
            counters = bench.counters;
            callsAtStart = counters.renewCalls.sum();
            leasesAtStart = counters.renewedLeases.sum();
        }

        void update() {
            renewCalls = counters.renewCalls.sum() - callsAtStart;
            renewedLeases = counters.renewedLeases.sum() - leasesAtStart;
        }
    }

    /**
     * One foreground lock/unlock cycle while the leases are renewed.
     *
     * @param renewals counters, refreshed on every call
     */
    @Benchmark
    public void foregroundCycle(Renewals renewals) {
        foreground.lock();
        foreground.unlock();
        renewals.update();
    }
}
