package dev.dlock.etcd;

import static org.assertj.core.api.Assertions.assertThat;

import dev.dlock.testsupport.ChildProcesses;
import java.io.IOException;
import java.net.ServerSocket;
import java.net.Socket;
import java.nio.charset.StandardCharsets;
import java.nio.file.Path;
import java.util.List;
import java.util.concurrent.CopyOnWriteArrayList;
import java.util.concurrent.TimeUnit;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.Timeout;

/** The first connect of a JVM respects the operation timeout, like every later one. */
@Timeout(value = 60, unit = TimeUnit.SECONDS)
class EtcdConnectTest {
    private static final long TIMEOUT_MILLIS = 2_000;
    /** The first use of jetcd in a JVM loads its gRPC, Netty and Vert.x code before the request is sent. */
    private static final long FIRST_LOAD_MARGIN_MILLIS = 6_000;

    @Test
    void theFirstConnectToASilentServerFailsWithinTheOperationTimeout() throws Exception {
        // A server that accepts connections and never answers: the worst case, no refusal to react to.
        List<Socket> accepted = new CopyOnWriteArrayList<>();
        try (ServerSocket silent = new ServerSocket(0)) {
            Thread acceptor = new Thread(() -> {
                try {
                    while (true) {
                        accepted.add(silent.accept());
                    }
                } catch (IOException closed) {
                    // the test is over
                }
            });
            acceptor.setDaemon(true);
            acceptor.start();

            String[] line = probe("etcd://127.0.0.1:" + silent.getLocalPort()).split(" ", 2);
            long millis = Long.parseLong(line[0]);
            assertThat(line[1]).startsWith("LockBackendException: could not reach etcd within PT2S");
            assertThat(millis)
                    .as("the first open of a JVM gave up within the operation timeout (+ jetcd's first load)")
                    .isLessThan(TIMEOUT_MILLIS + FIRST_LOAD_MARGIN_MILLIS);
        } finally {
            for (Socket s : accepted) {
                s.close();
            }
        }
    }

    private static String probe(String uri) throws Exception {
        Path java = Path.of(System.getProperty("java.home"), "bin", "java");
        Process child = ChildProcesses.start(new ProcessBuilder(
                        java.toString(),
                        "-cp",
                        System.getProperty("java.class.path"),
                        FirstConnectProbe.class.getName(),
                        uri,
                        Long.toString(TIMEOUT_MILLIS))
                .redirectErrorStream(false)
                .redirectError(ProcessBuilder.Redirect.DISCARD));
        try {
            assertThat(child.waitFor(45, TimeUnit.SECONDS))
                    .as("the probe ended")
                    .isTrue();
            String out = new String(child.getInputStream().readAllBytes(), StandardCharsets.UTF_8).trim();
            String[] lines = out.split("\n");
            return lines[lines.length - 1];
        } finally {
            child.destroyForcibly();
        }
    }
}
