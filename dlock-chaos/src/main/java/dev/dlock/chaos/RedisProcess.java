package dev.dlock.chaos;

import java.io.IOException;
import java.io.UncheckedIOException;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.ArrayList;
import java.util.List;

/**
 * One {@code redis-server} (or Sentinel) process on a fixed port in its own directory, which the nemesis
 * may kill (SIGKILL), pause (SIGSTOP), or restart with the same files.
 *
 * <p>Failure modes: a server that does not answer PING within 20 s after a start throws with its log.
 */
final class RedisProcess implements AutoCloseable {
    private final String host;
    private final int port;
    private final Path dir;
    private final List<String> args;
    private Process process;

    private RedisProcess(String host, int port, Path dir, List<String> args) {
        this.host = host;
        this.port = port;
        this.dir = dir;
        this.args = args;
    }

    /** Starts a data server; {@code extra} are more {@code redis-server} arguments. */
    static RedisProcess server(String host, Path base, String... extra) {
        int port = Proc.freePort();
        Path dir = dir(base, "redis-" + port);
        List<String> args = new ArrayList<>(List.of(
                "--port",
                Integer.toString(port),
                "--bind",
                host,
                "--dir",
                dir.toString(),
                "--save",
                "",
                "--appendonly",
                "no",
                "--protected-mode",
                "no",
                "--logfile",
                dir.resolve("redis.log").toString()));
        args.addAll(List.of(extra));
        RedisProcess p = new RedisProcess(host, port, dir, args);
        p.start();
        return p;
    }

    /** Starts a Sentinel watching {@code master} under {@code masterName}, quorum 2, down after 1 s. */
    static RedisProcess sentinel(String host, Path base, RedisProcess master, String masterName) {
        int port = Proc.freePort();
        Path dir = dir(base, "sentinel-" + port);
        Path config = dir.resolve("sentinel.conf");
        try {
            Files.writeString(
                    config,
                    String.join(
                            "\n",
                            "port " + port,
                            "bind " + host,
                            "protected-mode no",
                            "dir " + dir,
                            "logfile " + dir.resolve("redis.log"),
                            "sentinel announce-ip " + host,
                            "sentinel monitor " + masterName + " " + host + " " + master.port() + " 2",
                            "sentinel down-after-milliseconds " + masterName + " 1000",
                            "sentinel failover-timeout " + masterName + " 4000",
                            "sentinel parallel-syncs " + masterName + " 1",
                            ""));
        } catch (IOException e) {
            throw new UncheckedIOException(e);
        }
        RedisProcess p = new RedisProcess(host, port, dir, List.of(config.toString(), "--sentinel"));
        p.start();
        return p;
    }

    private static Path dir(Path base, String name) {
        try {
            return Files.createDirectories(base.resolve(name));
        } catch (IOException e) {
            throw new UncheckedIOException(e);
        }
    }

    void start() {
        List<String> command = new ArrayList<>();
        command.add("redis-server");
        command.addAll(args);
        ProcessBuilder pb = new ProcessBuilder(command)
                .redirectErrorStream(true)
                .redirectOutput(dir.resolve("stdout.log").toFile());
        try {
            process = pb.start();
        } catch (IOException e) {
            throw new IllegalStateException("cannot run redis-server: apt-get install redis-server redis-tools", e);
        }
        Proc.await(
                "redis-server on port " + port + " did not answer: " + Proc.tail(dir.resolve("redis.log")), 20, () -> {
                    if (!process.isAlive()) {
                        throw new Proc.Gone("redis-server exited: " + Proc.tail(dir.resolve("redis.log")));
                    }
                    return call("PING").strip().equals("PONG");
                });
    }

    /** One command through {@code redis-cli}; the raw reply text. */
    String call(String... command) {
        List<String> full = new ArrayList<>(List.of("redis-cli", "-h", host, "-p", Integer.toString(port)));
        full.addAll(List.of(command));
        return Proc.run(10, full);
    }

    int port() {
        return port;
    }

    String address() {
        return host + ":" + port;
    }

    boolean alive() {
        return process != null && process.isAlive();
    }

    void kill() {
        Proc.killTree(process);
    }

    void pause() {
        Proc.signalTree(process.pid(), "STOP");
    }

    void resume() {
        Proc.signalTree(process.pid(), "CONT");
    }

    @Override
    public void close() {
        kill();
    }
}
