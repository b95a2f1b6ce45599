package dev.dlock.testsupport;

import java.io.IOException;
import java.io.InputStream;
import java.io.OutputStream;
import java.io.UncheckedIOException;
import java.net.InetSocketAddress;
import java.net.Socket;
import java.nio.charset.StandardCharsets;
import java.nio.file.Files;
import java.nio.file.Path;
import java.time.Duration;
import java.util.ArrayList;
import java.util.Comparator;
import java.util.List;
import java.util.Map;
import java.util.function.IntSupplier;
import java.util.stream.Stream;

/**
 * One {@code redis-server} (or Sentinel) process in a directory of its own, on a port from {@link
 * FreePorts} whose Redis Cluster bus port (port + 10,000) is free too, started through {@link
 * ChildProcesses} (it dies with the JVM). A test, the fault suite or the bench can kill it like a crash,
 * start it again on the same port with the same files (or without them), freeze and thaw it.
 *
 * <p>Design note. Without options the server keeps no data ({@code --save ""}, {@code --appendonly no});
 * options given at the start come after these and override them. A server is up when its own log
 * says it listens (data loaded) and it answers PING with PONG (or, with a password, NOAUTH): the log
 * tells it from another server that took the port meanwhile and answers PING too. A first start whose port was taken between choosing and binding ({@code Address already in use}
 * in its log) is tried again on a fresh port; a restart keeps its port. {@link #close()} kills the
 * process and deletes the directory when this class created it (a directory under a given parent is
 * left to its owner).
 *
 * <p>Needs {@code redis-server} on the PATH ({@code apt-get install redis-server}, which {@code
 * scripts/test.sh} does); without it the start fails with that advice.
 *
 * <pre>{@code
 * try (RedisProcess redis = RedisProcess.start("--requirepass", "secret")) {
 *     LockClient client = LockClient.connect(redis.uri());
 *     redis.kill();
 *     redis.restart();
 * }
 * }</pre>
 */
public final class RedisProcess implements AutoCloseable {
    private static final int START_TRIES = 3;
    private static final Duration ANSWER_WITHIN = Duration.ofSeconds(20);

    private final String host;
    private final Path dir;
    private final boolean ownDir;
    private final boolean sentinel;
    private final List<String> args;
    /** More environment variables of the process (a stepped clock's), empty for none. */
    private Map<String, String> environment = Map.of();

    private int port;
    private Process process;

    private RedisProcess(String host, Path dir, boolean ownDir, boolean sentinel, List<String> args) {
        this.host = host;
        this.dir = dir;
        this.ownDir = ownDir;
        this.sentinel = sentinel;
        this.args = args;
    }

    /**
     * Starts a data server on 127.0.0.1 in a temporary directory and waits until it answers.
     *
     * @param options more {@code redis-server} options, e.g. {@code "--requirepass", "secret"}
     * @return the running server
     * @throws IllegalStateException when {@code redis-server} is not installed or does not come up
     */
    public static RedisProcess start(String... options) {
        return startOn("127.0.0.1", null, options);
    }

    /**
     * Starts a data server bound to {@code host}, in a directory {@code redis-PORT} under {@code parent}
     * (a temporary directory when null), and waits until it answers.
     *
     * @param host the address it binds and is reached on
     * @param parent where its directory goes, or null for a temporary one
     * @param options more {@code redis-server} options
     * @return the running server
     * @throws IllegalStateException when {@code redis-server} is not installed or does not come up
     */
    public static RedisProcess startOn(String host, Path parent, String... options) {
        return started(host, parent, "redis-", dataArgs(host, options), false, () -> FreePorts.nextPair(10_000));
    }

    /** A data server's arguments: no persistence, its log in its directory, then {@code options}. */
    private static List<String> dataArgs(String host, String... options) {
        List<String> args = new ArrayList<>(List.of(
                "--bind",
                host,
                "--save",
                "",
                "--appendonly",
                "no",
                "--protected-mode",
                "no",
                "--logfile",
                "redis.log"));
        args.addAll(List.of(options));
        return args;
    }

    /**
     * Starts a data server on 127.0.0.1 in a temporary directory whose wall clock {@code clock} steps, and
     * waits until it answers. A restart keeps the clock.
     *
     * @param clock the clock the server reads its time from
     * @param options more {@code redis-server} options
     * @return the running server
     * @throws IllegalStateException when {@code redis-server} is not installed or does not come up
     */
    public static RedisProcess start(SteppedClock clock, String... options) {
        return startOn(clock, "127.0.0.1", null, options);
    }

    /**
     * Starts a data server bound to {@code host}, in a directory under {@code parent} (a temporary one when
     * null), whose wall clock {@code clock} steps, and waits until it answers. A restart keeps the clock.
     *
     * @param clock the clock the server reads its time from
     * @param host the address it binds and is reached on
     * @param parent where its directory goes, or null for a temporary one
     * @param options more {@code redis-server} options
     * @return the running server
     * @throws IllegalStateException when {@code redis-server} is not installed or does not come up
     */
    public static RedisProcess startOn(SteppedClock clock, String host, Path parent, String... options) {
        return started(
                host,
                parent,
                "redis-",
                dataArgs(host, options),
                false,
                () -> FreePorts.nextPair(10_000),
                clock.environment());
    }

    /**
     * Starts a Sentinel bound to {@code host} that watches the master on {@code masterPort} (on the same
     * host) as {@code masterName}: quorum 2, down after 1 s, one replica synced at a time.
     *
     * @param host the address it binds, announces and watches the master on
     * @param parent where its directory goes, or null for a temporary one
     * @param masterPort the master's port
     * @param masterName the name clients ask the Sentinels for
     * @param failoverTimeout Sentinel's {@code failover-timeout}
     * @return the running Sentinel
     * @throws IllegalStateException when {@code redis-server} is not installed or does not come up
     */
    public static RedisProcess sentinel(
            String host, Path parent, int masterPort, String masterName, Duration failoverTimeout) {
        List<String> config = List.of(
                "bind " + host,
                "protected-mode no",
                "logfile redis.log",
                "sentinel announce-ip " + host,
                "sentinel monitor " + masterName + " " + host + " " + masterPort + " 2",
                "sentinel down-after-milliseconds " + masterName + " 1000",
                "sentinel failover-timeout " + masterName + " " + failoverTimeout.toMillis(),
                "sentinel parallel-syncs " + masterName + " 1");
        return started(host, parent, "sentinel-", config, true, () -> FreePorts.nextPair(10_000));
    }

    /** Starts on a port from {@code ports}, on another one when the port was taken before the server bound it. */
    static RedisProcess started(
            String host, Path parent, String kind, List<String> args, boolean sentinel, IntSupplier ports) {
        return started(host, parent, kind, args, sentinel, ports, Map.of());
    }

    private static RedisProcess started(
            String host,
            Path parent,
            String kind,
            List<String> args,
            boolean sentinel,
            IntSupplier ports,
            Map<String, String> environment) {
        for (int tried = 1; ; tried++) {
            int port = ports.getAsInt();
            RedisProcess redis = created(host, parent, kind + port, sentinel, args);
            redis.environment = environment;
            redis.port = port;
            try {
                redis.writeConfig();
                redis.launch();
                return redis;
            } catch (RuntimeException e) {
                boolean portTaken = redis.log().contains("Address already in use");
                redis.close();
                if (!portTaken || tried == START_TRIES) {
                    throw e;
                }
            }
        }
    }

    private static RedisProcess created(String host, Path parent, String name, boolean sentinel, List<String> args) {
        try {
            Path dir = parent == null
                    ? Files.createTempDirectory("dlock-" + name + "-")
                    : Files.createDirectories(parent.resolve(name));
            return new RedisProcess(host, dir, parent == null, sentinel, List.copyOf(args));
        } catch (IOException e) {
            throw new UncheckedIOException(e);
        }
    }

    /** The configuration file: the port and the directory, then a Sentinel's lines (it needs a file). */
    private void writeConfig() {
        List<String> lines = new ArrayList<>(List.of("port " + port, "dir " + dir));
        if (sentinel) {
            lines.addAll(args);
        }
        try {
            Files.write(dir.resolve("redis.conf"), lines);
        } catch (IOException e) {
            throw new UncheckedIOException(e);
        }
    }

    private void launch() {
        List<String> command = new ArrayList<>(
                List.of("redis-server", dir.resolve("redis.conf").toString()));
        if (sentinel) {
            command.add("--sentinel");
        } else {
            command.addAll(args);
        }
        try {
            ProcessBuilder builder = new ProcessBuilder(command)
                    .directory(dir.toFile())
                    .redirectErrorStream(true)
                    .redirectOutput(dir.resolve("stdout.log").toFile());
            builder.environment().putAll(environment);
            process = ChildProcesses.start(builder);
        } catch (IOException e) {
            throw new IllegalStateException(
                    "cannot run redis-server: install it (apt-get install redis-server redis-tools, as scripts/test.sh does)",
                    e);
        }
        long deadline = System.nanoTime() + ANSWER_WITHIN.toNanos();
        while (!(listening() && answersPing())) {
            if (!process.isAlive()) {
                throw new IllegalStateException("redis-server on port " + port + " exited: " + log());
            }
            if (System.nanoTime() - deadline > 0) {
                throw new IllegalStateException("redis-server on port " + port + " did not answer: " + log());
            }
            pause(20);
        }
    }

    /**
     * Whether this process (not another server that took the port meanwhile and answers PING too) says
     * in its log that it listens: its own pid starts the line, so a restart's old lines do not count.
     */
    private boolean listening() {
        String mark = sentinel ? "Running mode=sentinel" : "Ready to accept connections";
        String pid = process.pid() + ":";
        return log().lines().anyMatch(line -> line.startsWith(pid) && line.contains(mark));
    }

    /** PONG, or NOAUTH from a server with a password, means the server is up (LOADING: not yet). */
    private boolean answersPing() {
        try (Socket socket = new Socket()) {
            socket.connect(new InetSocketAddress(host, port), 200);
            socket.setSoTimeout(500);
            OutputStream out = socket.getOutputStream();
            out.write("PING\r\n".getBytes(StandardCharsets.US_ASCII));
            out.flush();
            InputStream in = socket.getInputStream();
            String answer = new String(in.readNBytes(7), StandardCharsets.US_ASCII);
            return answer.equals("+PONG\r\n") || answer.startsWith("-NOAUTH");
        } catch (IOException e) {
            return false;
        }
    }

    private static void pause(long millis) {
        try {
            Thread.sleep(millis);
        } catch (InterruptedException e) {
            Thread.currentThread().interrupt();
            throw new IllegalStateException(e);
        }
    }

    /**
     * The port it listens on.
     *
     * @return the port
     */
    public int port() {
        return port;
    }

    /**
     * The address it binds.
     *
     * @return the host given at the start, 127.0.0.1 by default
     */
    public String host() {
        return host;
    }

    /**
     * Host and port.
     *
     * @return {@code host:port}
     */
    public String address() {
        return host + ":" + port;
    }

    /**
     * The server's URI without options or credentials.
     *
     * @return {@code redis://host:port}
     */
    public String uri() {
        return "redis://" + address();
    }

    /**
     * Its directory: data files, {@code redis.conf}, {@code redis.log}.
     *
     * @return the directory
     */
    public Path dir() {
        return dir;
    }

    /**
     * The server's log (or what it printed before it had one), for failure messages.
     *
     * @return the log text, or a note that there is none
     */
    public String log() {
        try {
            Path log = dir.resolve("redis.log");
            Path stdout = dir.resolve("stdout.log");
            return Files.exists(log) ? Files.readString(log) : Files.exists(stdout) ? Files.readString(stdout) : "";
        } catch (IOException e) {
            return "(no log: " + e + ")";
        }
    }

    /**
     * Whether the process runs (a frozen one does).
     *
     * @return true while it runs
     */
    public boolean isRunning() {
        return process != null && process.isAlive();
    }

    /** Kills the process like a crash (SIGKILL, also when frozen) and waits until it is gone. */
    public void kill() {
        ChildProcesses.killTree(process);
    }

    /** Starts the process again on the same port with the same files; returns when it answers. */
    public void restart() {
        kill();
        launch();
    }

    /**
     * Starts the process again on the same port without its data (RDB file and AOF directory deleted; a
     * Cluster node keeps its {@code nodes.conf}, so it comes back as master of its slots, empty).
     */
    public void restartEmpty() {
        kill();
        try {
            Files.deleteIfExists(dir.resolve("dump.rdb"));
            deleteTree(dir.resolve("appendonlydir"));
        } catch (IOException | UncheckedIOException e) {
            throw new IllegalStateException("cannot delete the data of redis-server on port " + port, e);
        }
        launch();
    }

    /** Makes the process stop answering without dying, keeping its connections (SIGSTOP). */
    public void freeze() {
        ChildProcesses.signalTree(process.pid(), "STOP");
    }

    /** Makes a frozen process answer again (SIGCONT). */
    public void thaw() {
        ChildProcesses.signalTree(process.pid(), "CONT");
    }

    /** Kills the process and deletes its directory if it was a temporary one. */
    @Override
    public void close() {
        kill();
        if (ownDir) {
            try {
                deleteTree(dir);
            } catch (IOException | UncheckedIOException e) {
                // a leftover temporary directory is harmless
            }
        }
    }

    private static void deleteTree(Path root) throws IOException {
        if (!Files.exists(root)) {
            return;
        }
        try (Stream<Path> files = Files.walk(root)) {
            for (Path file : files.sorted(Comparator.reverseOrder()).toList()) {
                Files.deleteIfExists(file);
            }
        }
    }
}
