package dev.dlock.chaos;

import dev.dlock.testsupport.ChildProcesses;
import java.io.IOException;
import java.io.UncheckedIOException;
import java.nio.file.Path;
import java.util.ArrayList;
import java.util.List;
import java.util.Map;
import java.util.concurrent.ConcurrentHashMap;
import java.util.concurrent.TimeUnit;

/**
 * The client JVMs of one store's run ({@link ChaosClient}), each in its own network namespace when
 * namespaces are on, each on its own {@link FakeClock} when libfaketime is installed. A killed client
 * is started again with the same id and a new seed.
 *
 * <p>Failure modes: a client that does not exit within 20 s of {@code stop} is killed.
 */
final class Clients implements AutoCloseable {
    private final int count;
    private final Net net;
    private final History history;
    private final Path dir;
    private final String classpath;
    private final Map<String, String> args;
    private final Map<Integer, Process> processes = new ConcurrentHashMap<>();
    private final Map<Integer, FakeClock> clocks = new ConcurrentHashMap<>();
    private final Map<Integer, Integer> incarnations = new ConcurrentHashMap<>();

    Clients(int count, Net net, History history, Path dir, String classpath, Map<String, String> args) {
        this.count = count;
        this.net = net;
        this.history = history;
        this.dir = dir;
        this.classpath = classpath;
        this.args = args;
    }

    int count() {
        return count;
    }

    void startAll() {
        for (int id = 1; id <= count; id++) {
            start(id);
        }
    }

    void start(int id) {
        int incarnation = incarnations.merge(id, 1, Integer::sum);
        List<String> command = new ArrayList<>(net.prefix(id));
        command.addAll(List.of(
                "java",
                "-Xmx96m",
                "-XX:+UseSerialGC",
                "-XX:TieredStopAtLevel=1",
                "-Djava.net.preferIPv4Stack=true",
                "-Dorg.slf4j.simpleLogger.defaultLogLevel=warn",
                "-cp",
                classpath,
                ChaosClient.class.getName(),
                "--id",
                Integer.toString(id),
                "--controller",
                history.address(),
                "--seed",
                Long.toString(Long.parseLong(args.get("seed")) * 31 + id * 1000L + incarnation)));
        args.forEach((k, v) -> {
            if (!k.equals("seed")) {
                command.add("--" + k);
                command.add(v);
            }
        });
        ProcessBuilder pb = new ProcessBuilder(command)
                .redirectErrorStream(true)
                .redirectOutput(ProcessBuilder.Redirect.appendTo(
                        dir.resolve("client-" + id + ".log").toFile()));
        if (FakeClock.library() != null) {
            FakeClock clock = clocks.computeIfAbsent(id, i -> new FakeClock(dir.resolve("faketime-" + i)));
            clock.set(0);
            pb.environment().putAll(clock.environment());
        }
        try {
            processes.put(id, ChildProcesses.start(pb));
        } catch (IOException e) {
            throw new UncheckedIOException(e);
        }
    }

    boolean alive(int id) {
        Process p = processes.get(id);
        return p != null && p.isAlive();
    }

    void pause(int id) {
        ChildProcesses.signalTree(processes.get(id).pid(), "STOP");
    }

    void resume(int id) {
        ChildProcesses.signalTree(processes.get(id).pid(), "CONT");
    }

    void kill(int id) {
        ChildProcesses.killTree(processes.get(id));
    }

    FakeClock clock(int id) {
        return clocks.get(id);
    }

    /** Asks every client to stop and waits for them; kills the ones that do not exit. */
    void stopAll() {
        for (int id = 1; id <= count; id++) {
            history.stop(id);
        }
        for (Process p : processes.values()) {
            try {
                if (!p.waitFor(20, TimeUnit.SECONDS)) {
                    ChildProcesses.killTree(p);
                }
            } catch (InterruptedException e) {
                Thread.currentThread().interrupt();
            }
        }
    }

    @Override
    public void close() {
        processes.values().forEach(ChildProcesses::killTree);
    }
}
