package dev.dlock.bench;

import dev.dlock.DistributedLock;
import dev.dlock.LockClient;
import dev.dlock.testsupport.RedisProcess;
import io.lettuce.core.RedisClient;
import io.lettuce.core.api.StatefulRedisConnection;
import io.lettuce.core.api.sync.RedisCommands;
import java.util.concurrent.TimeUnit;
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
 * What the told-first check (the hold-back after a lost state, issue 22) costs an uncontended Redis cycle,
 * per way of running dlock's scripts: {@code function} (the default on Redis 7+: a function library that
 * reads the server's run id once per process), {@code script} (EVAL scripts, which read {@code INFO
 * server} in every grant: Redis before 7, or an ACL user without functions, made here with such a user),
 * and {@code unsafe} (scripts with the check switched off, {@code unsafeGrantAfterRestart=true}: the
 * floor). Issue 22 allows the check 5% of the uncontended cycle.
 *
 * <p>Besides JMH's client time per cycle, each measured iteration prints the server's CPU per script call
 * ({@code INFO commandstats}, reset when the iteration starts), which does not depend on what else the
 * client's cores run.
 *
 * <p>Run: {@code scripts/bench.sh --jmh RedisToldFirstCostBenchmark} (starts its own {@code redis-server}).
 */
@BenchmarkMode(Mode.AverageTime)
@OutputTimeUnit(TimeUnit.MICROSECONDS)
@Warmup(iterations = 3, time = 2)
@Measurement(iterations = 5, time = 2)
@Fork(1)
@State(Scope.Benchmark)
public class RedisToldFirstCostBenchmark {
    private static final String NAMESPACE = "jmh-told";
    private static final String USER = "dlock-bench-scripts";

    /** For JMH, which instantiates it. */
    public RedisToldFirstCostBenchmark() {}

    /** How the scripts run: {@code function}, {@code script} or {@code unsafe}. */
    @Param({"function", "script", "unsafe"})
    public String form;

    private RedisProcess server;
    private RedisClient admin;
    private StatefulRedisConnection<String, String> adminConnection;
    private LockClient client;
    private DistributedLock lock;

    /** Starts the server, marks it as used before (no fresh-server hold-back), opens the client. */
    @Setup(Level.Trial)
    public void open() {
        server = RedisProcess.start();
        admin = RedisClient.create(server.uri());
        adminConnection = admin.connect();
        RedisCommands<String, String> redis = adminConnection.sync();
        String runId = redis.info("server")
                .lines()
                .filter(line -> line.startsWith("run_id:"))
                .findFirst()
                .orElseThrow()
                .substring("run_id:".length())
                .strip();
        redis.set(NAMESPACE + ":epoch", runId + " 0 30000");
        redis.aclSetuser(
                USER,
                io.lettuce.core.AclSetuserArgs.Builder.on()
                        .addPassword("pw")
                        .allKeys()
                        .allChannels()
                        .allCommands()
                        .removeCommand(io.lettuce.core.protocol.CommandType.FCALL)
                        .removeCommand(io.lettuce.core.protocol.CommandType.FUNCTION));
        String scripts = "redis://" + USER + ":pw@" + server.host() + ":" + server.port();
        String uri =
                switch (form) {
                    case "function" -> server.uri();
                    case "script" -> scripts;
                    case "unsafe" -> scripts + "?unsafeGrantAfterRestart=true";
                    default -> throw new IllegalArgumentException("form must be function, script or unsafe: " + form);
                };
        client = LockClient.builder(uri).namespace(NAMESPACE).build();
        lock = client.lock("cycle");
    }

    /** Resets the server's command statistics. */
    @Setup(Level.Iteration)
    public void resetStatistics() {
        adminConnection.sync().configResetstat();
    }

    /** Prints the server's CPU per script call in this iteration. */
    @TearDown(Level.Iteration)
    public void printServerCost() {
        String stats = adminConnection.sync().info("commandstats");
        stats.lines()
                .filter(line -> line.startsWith("cmdstat_fcall:") || line.startsWith("cmdstat_evalsha:"))
                .forEach(line -> System.out.println("  [" + form + "] server: " + line));
    }

    /** Closes the client and the server. */
    @TearDown(Level.Trial)
    public void close() {
        client.close();
        adminConnection.close();
        admin.shutdown();
        server.close();
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
