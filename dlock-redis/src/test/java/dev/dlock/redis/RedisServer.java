package dev.dlock.redis;

import dev.dlock.testsupport.FreePorts;
import dev.dlock.testsupport.RedisProcess;
import java.time.Duration;

/**
 * A {@code redis-server} process of a test ({@link RedisProcess} of dlock-test-support: a free port, its own
 * temporary directory, kill, restart with or without its files, freeze), with what the Redis backend's
 * tests add: commands through {@link Resp}, URIs with or without the hold-back after a lost state, and
 * the marker of a fresh server.
 */
final class RedisServer implements AutoCloseable {
    private final RedisProcess process;

    private RedisServer(RedisProcess process) {
        this.process = process;
    }

    /** Starts a server with no persistence unless {@code extraArgs} say otherwise. */
    static RedisServer start(String... extraArgs) {
        return new RedisServer(RedisProcess.start(extraArgs));
    }

    /** A free TCP port whose Cluster bus port (port + 10000) is free too. */
    static int freePort() {
        return FreePorts.nextPair(10_000);
    }

    /**
     * Starts a Sentinel monitoring the master on {@code masterPort} under {@code masterName}, deciding
     * quickly (down after 1 s) with a quorum of 2.
     */
    static RedisServer sentinel(int masterPort, String masterName) {
        return new RedisServer(RedisProcess.sentinel("127.0.0.1", null, masterPort, masterName, Duration.ofSeconds(5)));
    }

    String log() {
        return process.log();
    }

    static void sleep(long millis) {
        try {
            Thread.sleep(millis);
        } catch (InterruptedException e) {
            Thread.currentThread().interrupt();
            throw new IllegalStateException(e);
        }
    }

    int port() {
        return process.port();
    }

    /**
     * The server's URI with the hold-back after a lost state switched off: the tests that use it start a
     * fresh server (which a lock client cannot tell from one restarted without persistence) and are not
     * about restarts, so the default would only make their first grant wait {@code maxLease}. The tests
     * of the hold-back use {@link #plainUri()}.
     */
    String uri() {
        return plainUri() + "?unsafeGrantAfterRestart=true";
    }

    /** The server's URI with every option at its default. */
    String plainUri() {
        return process.uri();
    }

    /**
     * Records that no lock client of {@code namespace} used this fresh server before, so that nothing can
     * have been lost: the marker a long-running server's first grant writes (its run id, no loss since
     * 1970, the default max lease). For tests that open a client of the application with default
     * settings and are not about restarts.
     */
    void markFresh(String namespace) {
        String info = (String) call("INFO", "server");
        String runId = info.lines()
                .filter(line -> line.startsWith("run_id:"))
                .findFirst()
                .orElseThrow()
                .substring("run_id:".length())
                .strip();
        call("SET", ResourceKeys.epoch(namespace), runId + " 0 " + HoldBack.DEFAULT_MAX_LEASE.toMillis());
    }

    boolean isRunning() {
        return process.isRunning();
    }

    /** One command on a fresh admin connection. */
    Object call(String... command) {
        return Resp.call(port(), command);
    }

    /** Kills the process like a crash (SIGKILL) and waits until it is gone. */
    void kill() {
        process.kill();
    }

    /** Starts the process again on the same port, with the same files; returns when it answers. */
    void restart() {
        process.restart();
    }

    /**
     * Starts the process again on the same port without its data (AOF directory and RDB file deleted; a
     * Cluster node keeps its {@code nodes.conf}, so it comes back as master of its slots, empty).
     */
    void restartEmpty() {
        process.restartEmpty();
    }

    /** Makes the process stop answering without dying (SIGSTOP) ... */
    void freeze() {
        process.freeze();
    }

    /** ... and answer again (SIGCONT). */
    void thaw() {
        process.thaw();
    }

    @Override
    public void close() {
        process.close();
    }
}
