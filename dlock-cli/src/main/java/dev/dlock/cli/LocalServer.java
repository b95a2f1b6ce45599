package dev.dlock.cli;

import java.io.File;
import java.io.IOException;
import java.io.Reader;
import java.io.Writer;
import java.nio.channels.FileChannel;
import java.nio.channels.FileLock;
import java.nio.charset.StandardCharsets;
import java.nio.file.AtomicMoveNotSupportedException;
import java.nio.file.Files;
import java.nio.file.Path;
import java.nio.file.StandardCopyOption;
import java.nio.file.StandardOpenOption;
import java.util.ArrayList;
import java.util.List;
import java.util.Optional;
import java.util.Properties;
import java.util.concurrent.ExecutionException;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.TimeoutException;

/**
 * The local ZooKeeper server behind the default backend: one detached JVM per state directory, running
 * {@code dlock server-process}, listening on a free port of 127.0.0.1, its data under {@code
 * <state>/zookeeper}, its log in {@code <state>/server.log}, and its port and pid in {@code
 * <state>/server.properties} (written by the server once it listens).
 *
 * <p>Concurrency: starting and stopping hold an exclusive file lock on {@code <state>/server.lock} (and a
 * JVM-wide monitor, as file locks are per process), so two commands starting the server at once end with
 * one server: the second finds the first's running and uses it. A server counts as running only when its
 * pid is alive and its port answers ZooKeeper's {@code srvr} command.
 *
 * <p>Failure modes: a server that does not come up within {@link #START_TIMEOUT_SECONDS} is killed and
 * {@link #ensureRunning()} throws {@link IllegalStateException} quoting the end of its log.
 */
final class LocalServer {
    static final int START_TIMEOUT_SECONDS = 30;
    static final String INFO_FILE = "server.properties";

    private static final Object JVM_LOCK = new Object();

    private final Path stateDir;

    private LocalServer(Path stateDir) {
        this.stateDir = stateDir;
    }

    static LocalServer in(Path stateDir) {
        return new LocalServer(stateDir.toAbsolutePath());
    }

    /** A running server as recorded in its info file. */
    record Info(long pid, int port) {
        String uri() {
            return "zookeeper://127.0.0.1:" + port;
        }
    }

    Path stateDir() {
        return stateDir;
    }

    Path dataDir() {
        return stateDir.resolve("zookeeper");
    }

    Path logFile() {
        return stateDir.resolve("server.log");
    }

    /** The running server, if there is one. */
    Optional<Info> status() {
        return recorded().filter(LocalServer::alive);
    }

    /** Returns the running server, starting one first if none runs. */
    Info ensureRunning() {
        Optional<Info> running = status();
        if (running.isPresent()) {
            return running.get();
        }
        return locked(() -> {
            Optional<Info> again = status();
            return again.isPresent() ? again.get() : start();
        });
    }

    /** Stops the running server; returns what was stopped, empty if none ran. */
    Optional<Info> stop() {
        return locked(() -> {
            Optional<Info> running = status();
            running.flatMap(info -> ProcessHandle.of(info.pid())).ifPresent(LocalServer::terminate);
            Files.deleteIfExists(stateDir.resolve(INFO_FILE));
            return running;
        });
    }

    private Info start() throws IOException, InterruptedException {
        Files.deleteIfExists(stateDir.resolve(INFO_FILE));
        List<String> command = new ArrayList<>();
        for (String setsid : List.of("/usr/bin/setsid", "/bin/setsid")) {
            if (Files.isExecutable(Path.of(setsid))) {
                // Its own session: Ctrl-C or a closed terminal in the starting shell must not stop it.
                command.add(setsid);
                break;
            }
        }
        command.addAll(JavaCommand.forMain(
                List.of("-Xmx256m", "-XX:+UseSerialGC"), "server-process", "--state-dir", stateDir.toString()));
        ProcessBuilder builder = new ProcessBuilder(command)
                .redirectErrorStream(true)
                .redirectOutput(ProcessBuilder.Redirect.appendTo(logFile().toFile()));
        File devNull = new File("/dev/null");
        if (devNull.exists()) {
            builder.redirectInput(ProcessBuilder.Redirect.from(devNull));
        }
        Process process = builder.start();
        long deadline = System.nanoTime() + TimeUnit.SECONDS.toNanos(START_TIMEOUT_SECONDS);
        while (System.nanoTime() < deadline) {
            Optional<Info> info = recorded();
            if (info.isPresent() && alive(info.get())) {
                return info.get();
            }
            if (!process.isAlive() && process.exitValue() != 0) {
                throw new IllegalStateException("the local ZooKeeper server exited with code " + process.exitValue()
                        + "; end of " + logFile() + ":\n" + tail(logFile()));
            }
            Thread.sleep(50);
        }
        process.descendants().forEach(ProcessHandle::destroyForcibly);
        process.destroyForcibly();
        throw new IllegalStateException("the local ZooKeeper server did not start within " + START_TIMEOUT_SECONDS
                + "s; end of " + logFile() + ":\n" + tail(logFile()));
    }

    /** Records a server that listens now; called by the server process itself. */
    void record(Info info) throws IOException {
        Files.createDirectories(stateDir);
        Properties properties = new Properties();
        properties.setProperty("pid", Long.toString(info.pid()));
        properties.setProperty("port", Integer.toString(info.port()));
        Path temporary = Files.createTempFile(stateDir, INFO_FILE, ".tmp");
        try (Writer writer = Files.newBufferedWriter(temporary, StandardCharsets.UTF_8)) {
            properties.store(writer, "dlock local ZooKeeper server");
        }
        try {
            Files.move(temporary, stateDir.resolve(INFO_FILE), StandardCopyOption.ATOMIC_MOVE);
        } catch (AtomicMoveNotSupportedException e) {
            Files.move(temporary, stateDir.resolve(INFO_FILE), StandardCopyOption.REPLACE_EXISTING);
        }
    }

    /** Removes the info file if it still describes {@code pid}; called by the server process on exit. */
    void forget(long pid) {
        try {
            if (recorded().map(info -> info.pid() == pid).orElse(false)) {
                Files.deleteIfExists(stateDir.resolve(INFO_FILE));
            }
        } catch (IOException e) {
            // the next start replaces a stale file anyway
        }
    }

    private Optional<Info> recorded() {
        Path file = stateDir.resolve(INFO_FILE);
        if (!Files.isRegularFile(file)) {
            return Optional.empty();
        }
        Properties properties = new Properties();
        try (Reader reader = Files.newBufferedReader(file, StandardCharsets.UTF_8)) {
            properties.load(reader);
            return Optional.of(new Info(
                    Long.parseLong(properties.getProperty("pid", "")),
                    Integer.parseInt(properties.getProperty("port", ""))));
        } catch (IOException | RuntimeException e) {
            return Optional.empty(); // half-written or garbage: treated as no server
        }
    }

    private static boolean alive(Info info) {
        return ProcessHandle.of(info.pid()).map(ProcessHandle::isAlive).orElse(false)
                && EmbeddedZooKeeper.answers(info.port());
    }

    private static void terminate(ProcessHandle process) {
        process.destroy();
        try {
            process.onExit().get(10, TimeUnit.SECONDS);
        } catch (TimeoutException | ExecutionException e) {
            process.destroyForcibly();
        } catch (InterruptedException e) {
            process.destroyForcibly();
            Thread.currentThread().interrupt();
        }
    }

    private interface LockedAction<T> {
        T run() throws IOException, InterruptedException;
    }

    private <T> T locked(LockedAction<T> action) {
        synchronized (JVM_LOCK) {
            try {
                Files.createDirectories(stateDir);
                try (FileChannel channel = FileChannel.open(
                                stateDir.resolve("server.lock"), StandardOpenOption.CREATE, StandardOpenOption.WRITE);
                        FileLock lock = channel.lock()) {
                    return action.run();
                }
            } catch (IOException e) {
                throw new IllegalStateException("local server in " + stateDir + ": " + e.getMessage(), e);
            } catch (InterruptedException e) {
                Thread.currentThread().interrupt();
                throw new IllegalStateException("interrupted while managing the local server", e);
            }
        }
    }

    private static String tail(Path file) {
        try {
            List<String> lines = Files.readAllLines(file, StandardCharsets.UTF_8);
            return String.join("\n", lines.subList(Math.max(0, lines.size() - 20), lines.size()));
        } catch (IOException e) {
            return "(no log: " + e.getMessage() + ")";
        }
    }
}
