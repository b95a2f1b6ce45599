package dev.dlock.redis;

import java.io.IOException;
import java.io.UncheckedIOException;
import java.net.ServerSocket;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.ArrayList;
import java.util.Comparator;
import java.util.List;
import java.util.concurrent.TimeUnit;
import java.util.stream.Stream;

/**
 * A {@code redis-server} process started by a test on a free port, in its own temporary directory, that
 * the test can kill (SIGKILL, like a crash) and start again on the same port with the same files.
 *
 * <p>Needs {@code redis-server} on the PATH ({@code apt-get install redis-server}, which {@code
 * scripts/test.sh} does); without it the test fails with that advice.
 */
final class RedisServer implements AutoCloseable {
    private final int port;
    private final Path dir;
    private final List<String> args;
    private Process process;

    private RedisServer(int port, Path dir, List<String> args) {
        this.port = port;
        this.dir = dir;
        this.args = args;
    }

    /** Starts a server with no persistence unless {@code extraArgs} say otherwise. */
    static RedisServer start(String... extraArgs) {
        return start(freePort(), extraArgs);
    }

    static RedisServer start(int port, String... extraArgs) {
        try {
            Path dir = Files.createTempDirectory("dlock-redis-" + port + "-");
            List<String> args = new ArrayList<>(List.of(
                    "--port",
                    Integer.toString(port),
                    "--bind",
                    "127.0.0.1",
                    "--dir",
                    dir.toString(),
                    "--save",
                    "",
                    "--appendonly",
                    "no",
                    "--logfile",
                    dir.resolve("redis.log").toString()));
            args.addAll(List.of(extraArgs));
            RedisServer server = new RedisServer(port, dir, args);
            server.launch();
            return server;
        } catch (IOException e) {
            throw new UncheckedIOException(e);
        }
    }

    /** A free TCP port whose Cluster bus port (port + 10000) is free too. */
    static int freePort() {
        for (int attempt = 0; attempt < 50; attempt++) {
            try (ServerSocket socket = new ServerSocket(0)) {
                int port = socket.getLocalPort();
                if (port < 55_000) {
                    try (ServerSocket bus = new ServerSocket(port + 10_000)) {
                        return port;
                    } catch (IOException busy) {
                        // try another
                    }
                }
            } catch (IOException e) {
                throw new UncheckedIOException(e);
            }
        }
        throw new IllegalStateException("no free port pair found");
    }

    /**
     * Starts a Sentinel monitoring the master on {@code masterPort} under {@code masterName}, deciding
     * quickly (down after 1 s) with a quorum of 2.
     */
    static RedisServer sentinel(int masterPort, String masterName) {
        int port = freePort();
        try {
            Path dir = Files.createTempDirectory("dlock-sentinel-" + port + "-");
            Path config = dir.resolve("sentinel.conf");
            Files.writeString(
                    config,
                    String.join(
                            "\n",
                            "port " + port,
                            "bind 127.0.0.1",
                            "dir " + dir,
                            "logfile " + dir.resolve("redis.log"),
                            "sentinel monitor " + masterName + " 127.0.0.1 " + masterPort + " 2",
                            "sentinel down-after-milliseconds " + masterName + " 1000",
                            "sentinel failover-timeout " + masterName + " 5000",
                            "sentinel parallel-syncs " + masterName + " 1",
                            ""));
            RedisServer sentinel = new RedisServer(port, dir, List.of(config.toString(), "--sentinel"));
            sentinel.launch();
            return sentinel;
        } catch (IOException e) {
            throw new UncheckedIOException(e);
        }
    }

    private void launch() {
        List<String> command = new ArrayList<>();
        command.add("redis-server");
        command.addAll(args);
        try {
            process = new ProcessBuilder(command)
                    .redirectErrorStream(true)
                    .redirectOutput(dir.resolve("stdout.log").toFile())
                    .start();
        } catch (IOException e) {
            throw new IllegalStateException(
                    "cannot run redis-server: install it (apt-get install redis-server redis-tools, as scripts/test.sh does)",
                    e);
        }
        awaitAnswer();
    }

    private void awaitAnswer() {
        int answeringPort = port;
        long deadline = System.nanoTime() + TimeUnit.SECONDS.toNanos(15);
        while (true) {
            if (!process.isAlive()) {
                throw new IllegalStateException("redis-server on port " + answeringPort + " exited: " + log());
            }
            try {
                if ("PONG".equals(Resp.call(answeringPort, "PING"))) {
                    return;
                }
            } catch (RuntimeException notYet) {
                // still starting (or loading its data set)
            }
            if (System.nanoTime() > deadline) {
                throw new IllegalStateException("redis-server on port " + answeringPort + " did not answer: " + log());
            }
            sleep(20);
        }
    }

    String log() {
        try {
            Path log = dir.resolve("redis.log");
            return Files.exists(log) ? Files.readString(log) : Files.readString(dir.resolve("stdout.log"));
        } catch (IOException e) {
            return "(no log: " + e + ")";
        }
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
        return port;
    }

    Path dir() {
        return dir;
    }

    String uri() {
        return "redis://127.0.0.1:" + port;
    }

    boolean isRunning() {
        return process != null && process.isAlive();
    }

    /** One command on a fresh admin connection. */
    Object call(String... command) {
        return Resp.call(port, command);
    }

    /** Kills the process like a crash (SIGKILL) and waits until it is gone. */
    void kill() {
        if (process != null && process.isAlive()) {
            process.destroyForcibly();
            try {
                if (!process.waitFor(10, TimeUnit.SECONDS)) {
                    throw new IllegalStateException("redis-server on port " + port + " did not die");
                }
            } catch (InterruptedException e) {
                Thread.currentThread().interrupt();
                throw new IllegalStateException(e);
            }
        }
    }

    /** Starts the process again on the same port, with the same files; returns when it answers. */
    void restart() {
        kill();
        launch();
    }

    /** Makes the process stop answering without dying (SIGSTOP) ... */
    void freeze() {
        signal("STOP");
    }

    /** ... and answer again (SIGCONT). */
    void thaw() {
        signal("CONT");
    }

    private void signal(String name) {
        try {
            Process kill = new ProcessBuilder("kill", "-" + name, Long.toString(process.pid())).start();
            kill.waitFor(5, TimeUnit.SECONDS);
        } catch (IOException e) {
            throw new UncheckedIOException(e);
        } catch (InterruptedException e) {
            Thread.currentThread().interrupt();
            throw new IllegalStateException(e);
        }
    }

    @Override
    public void close() {
        if (process != null && process.isAlive()) {
            thaw();
        }
        kill();
        try (Stream<Path> files = Files.walk(dir)) {
            files.sorted(Comparator.reverseOrder()).forEach(p -> p.toFile().delete());
        } catch (IOException e) {
            // a leftover temporary directory is harmless
        }
    }
}
