package dev.dlock.cli;

import static org.assertj.core.api.Assertions.assertThat;

import java.io.IOException;
import java.net.ServerSocket;
import java.nio.file.Files;
import java.nio.file.Path;
import java.time.Duration;
import java.util.ArrayList;
import java.util.List;
import java.util.concurrent.TimeUnit;
import org.junit.jupiter.api.AfterEach;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;

/** {@code dlock run} and {@code dlock status} on Redlock over 3 {@code redis-server} processes. */
class RedlockRunTest {
    @TempDir
    Path dir;

    private final List<Process> servers = new ArrayList<>();

    @AfterEach
    void stopServers() throws InterruptedException {
        for (Process server : servers) {
            server.destroyForcibly().waitFor(5, TimeUnit.SECONDS);
        }
    }

    private int startServer() throws Exception {
        int port;
        try (ServerSocket socket = new ServerSocket(0)) {
            port = socket.getLocalPort();
        }
        try {
            servers.add(new ProcessBuilder(
                            "redis-server",
                            "--port",
                            "" + port,
                            "--bind",
                            "127.0.0.1",
                            "--save",
                            "",
                            "--appendonly",
                            "no")
                    .redirectErrorStream(true)
                    .redirectOutput(ProcessBuilder.Redirect.DISCARD)
                    .start());
        } catch (IOException e) {
            throw new IllegalStateException(
                    "cannot run redis-server (install it: apt-get install redis-server; scripts/test.sh does)", e);
        }
        long deadline = System.nanoTime() + Duration.ofSeconds(10).toNanos();
        while (true) {
            try (java.net.Socket probe = new java.net.Socket("127.0.0.1", port)) {
                return port;
            } catch (IOException notYet) {
                assertThat(System.nanoTime() - deadline)
                        .as("redis-server answers")
                        .isNegative();
                Thread.sleep(20);
            }
        }
    }

    @Test
    void runAcceptsARedlockUri() throws Exception {
        String backend =
                "redlock://127.0.0.1:" + startServer() + ",127.0.0.1:" + startServer() + ",127.0.0.1:" + startServer();
        Path out = dir.resolve("token.txt");
        TestEnvironment env = new TestEnvironment(dir);
        int code = env.parse("run", "--backend", backend, "job", "--", "sh", "-c", "echo $DLOCK_FENCING_TOKEN > " + out)
                .execute();
        assertThat(code).as(env.err()).isZero();
        assertThat(Long.parseLong(Files.readString(out).strip())).isPositive();
        TestEnvironment status = new TestEnvironment(dir);
        assertThat(status.parse("status", "--backend", backend, "job").execute())
                .isEqualTo(ExitCodes.BUSY);
        assertThat(status.out()).contains("job: free");
    }
}
