package dev.dlock.bench;

import java.io.IOException;
import java.net.ServerSocket;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.ArrayList;
import java.util.Comparator;
import java.util.List;
import java.util.concurrent.TimeUnit;
import java.util.stream.Stream;

/**
 * Independent {@code redis-server} processes on free local ports, without persistence, for the Redlock
 * systems (dlock's {@code redlock://} and Redisson's {@code RedissonRedLock}/{@code RedissonMultiLock}).
 * Started by the run when such a system is selected, killed at its end.
 *
 * <p>Failure modes: without {@code redis-server} on the PATH, starting fails with advice; {@link #close()}
 * kills what was started and deletes the temporary directory.
 */
final class LocalRedisMasters implements AutoCloseable {
    private final List<Process> processes = new ArrayList<>();
    private final List<Endpoints.HostPort> addresses = new ArrayList<>();
    private final Path dir;

    private LocalRedisMasters(Path dir) {
        this.dir = dir;
    }

    static LocalRedisMasters start(int count) throws IOException, InterruptedException {
        LocalRedisMasters masters = new LocalRedisMasters(Files.createTempDirectory("dlock-bench-redlock-"));
        try {
            for (int i = 0; i < count; i++) {
                masters.startOne();
            }
            return masters;
        } catch (IOException | InterruptedException | RuntimeException e) {
            masters.close();
            throw e;
        }
    }

    private void startOne() throws IOException, InterruptedException {
        int port;
        try (ServerSocket socket = new ServerSocket(0)) {
            port = socket.getLocalPort();
        }
        Process process;
        try {
            process = new ProcessBuilder(
                            "redis-server",
                            "--port",
                            Integer.toString(port),
                            "--bind",
                            "127.0.0.1",
                            "--dir",
                            dir.toString(),
                            "--save",
                            "",
                            "--appendonly",
                            "no")
                    .redirectErrorStream(true)
                    .redirectOutput(ProcessBuilder.Redirect.DISCARD)
                    .start();
        } catch (IOException e) {
            throw new IOException("cannot run redis-server for the Redlock masters (apt-get install redis-server)", e);
        }
        processes.add(process);
        Endpoints.HostPort address = new Endpoints.HostPort("127.0.0.1", port);
        long deadline = System.nanoTime() + TimeUnit.SECONDS.toNanos(10);
        while (Probes.tcp(address) != null) {
            if (System.nanoTime() - deadline > 0 || !process.isAlive()) {
                throw new IOException("redis-server did not start on port " + port);
            }
            Thread.sleep(20);
        }
        addresses.add(address);
    }

    List<Endpoints.HostPort> addresses() {
        return List.copyOf(addresses);
    }

    @Override
    public void close() {
        for (Process process : processes) {
            process.destroyForcibly();
            try {
                process.waitFor(5, TimeUnit.SECONDS);
            } catch (InterruptedException e) {
                Thread.currentThread().interrupt();
            }
        }
        try (Stream<Path> files = Files.walk(dir)) {
            files.sorted(Comparator.reverseOrder()).forEach(p -> p.toFile().delete());
        } catch (IOException e) {
            // a leftover temporary directory is harmless
        }
    }
}
