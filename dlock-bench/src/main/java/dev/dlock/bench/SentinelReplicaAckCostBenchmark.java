package dev.dlock.bench;

import dev.dlock.DistributedLock;
import dev.dlock.LockClient;
import dev.dlock.testsupport.RedisProcess;
import io.lettuce.core.RedisClient;
import io.lettuce.core.api.StatefulRedisConnection;
import java.time.Duration;
import java.util.ArrayList;
import java.util.List;
import java.util.concurrent.TimeUnit;
import java.util.function.BooleanSupplier;
import java.util.stream.Collectors;
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
 * What the replica acknowledgement costs an uncontended cycle on Redis Sentinel (issue 22: told first
 * across a failover needs a grant acknowledged by a replica, {@code waitReplicas=1}, the default there):
 * one client, one name, lock and unlock through the {@code Lock} view, with {@code waitReplicas=1} (a
 * grant and a release are each answered after one replica confirmed them, {@code WAIT}) against {@code
 * waitReplicas=0} (answered at once). Its own master, one replica and three Sentinels, all on 127.0.0.1, so
 * the acknowledgement costs a loopback round trip to the replica and the replica's apply.
 *
 * <p>Run: {@code scripts/bench.sh --jmh SentinelReplicaAckCostBenchmark}.
 */
@BenchmarkMode(Mode.AverageTime)
@OutputTimeUnit(TimeUnit.MICROSECONDS)
@Warmup(iterations = 3, time = 2)
@Measurement(iterations = 5, time = 2)
@Fork(1)
@State(Scope.Benchmark)
public class SentinelReplicaAckCostBenchmark {
    private static final String MASTER = "benchmaster";

    /** For JMH, which instantiates it. */
    public SentinelReplicaAckCostBenchmark() {}

    /** Replicas that must acknowledge a grant or release before it is answered: {@code 1} or {@code 0}. */
    @Param({"1", "0"})
    public String waitReplicas;

    private final List<RedisProcess> servers = new ArrayList<>();
    private LockClient client;
    private DistributedLock lock;

    /**
     * Starts the master, its replica and three Sentinels, waits until the replica is in sync and the
     * Sentinels see it, then opens the client and waits out a fresh server's hold-back (1 s here).
     *
     * @throws InterruptedException when interrupted while waiting
     */
    @Setup(Level.Trial)
    public void open() throws InterruptedException {
        RedisProcess master = RedisProcess.start();
        servers.add(master);
        servers.add(RedisProcess.start("--replicaof", master.host(), Integer.toString(master.port())));
        RedisClient admin = RedisClient.create(master.uri());
        try (StatefulRedisConnection<String, String> c = admin.connect()) {
            awaitTrue(
                    "the replica did not sync",
                    () -> c.sync().info("replication").contains("connected_slaves:1"));
        } finally {
            admin.shutdown();
        }
        List<RedisProcess> sentinels = new ArrayList<>();
        for (int i = 0; i < 3; i++) {
            sentinels.add(RedisProcess.sentinel(master.host(), null, master.port(), MASTER, Duration.ofSeconds(10)));
        }
        servers.addAll(sentinels);
        String hosts = sentinels.stream().map(RedisProcess::address).collect(Collectors.joining(","));
        client = LockClient.builder(
                        "redis-sentinel://" + hosts + "?maxLease=1s&waitReplicas=" + waitReplicas + "#" + MASTER)
                .namespace("jmh-ack")
                .leaseTime(Duration.ofSeconds(1))
                .build();
        lock = client.lock("cycle");
        if (!lock.tryLock(10, TimeUnit.SECONDS)) {
            throw new IllegalStateException("the lock was not granted within 10 s of the start");
        }
        lock.unlock();
    }

    private static void awaitTrue(String failure, BooleanSupplier done) throws InterruptedException {
        long deadline = System.nanoTime() + TimeUnit.SECONDS.toNanos(30);
        while (!done.getAsBoolean()) {
            if (System.nanoTime() - deadline > 0) {
                throw new IllegalStateException(failure);
            }
            Thread.sleep(50);
        }
    }

    /** Closes the client and every server. */
    @TearDown(Level.Trial)
    public void close() {
        client.close();
        servers.forEach(RedisProcess::close);
    }

    /**
     * Takes the lock and releases it.
     *
     * @return whether this thread held it in between (always true), so the cycle is not optimised away
     */
    @Benchmark
    public boolean lockAndUnlock() {
        return UncontendedCycleBenchmark.cycle(lock);
    }
}
