package dev.dlock.cli;

import static org.assertj.core.api.Assertions.assertThat;

import java.net.InetAddress;
import java.net.ServerSocket;
import java.net.URI;
import java.net.http.HttpClient;
import java.net.http.HttpRequest;
import java.net.http.HttpResponse;
import java.nio.file.Path;
import java.time.Duration;
import java.util.regex.Matcher;
import java.util.regex.Pattern;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;

/** {@code dlock console}'s bad input and its warning for a non-loopback address. */
class ConsoleCommandTest {
    @TempDir
    Path home;

    @Test
    void unknownBackendExitsTwoNamingIt() {
        TestEnvironment env = new TestEnvironment(home);
        int code = env.parse("console", "--port", "0", "--backend", "foo://x").execute();
        assertThat(code).isEqualTo(2);
        assertThat(env.err()).contains("no dlock backend").contains("foo:");
        assertThat(env.out()).isEmpty();
    }

    @Test
    void portInUseExits69WithAClearMessage() throws Exception {
        try (ServerSocket taken = new ServerSocket(0, 1, InetAddress.getLoopbackAddress())) {
            TestEnvironment env = new TestEnvironment(home);
            int code = env.parse("console", "--port", Integer.toString(taken.getLocalPort()), "--backend", "mem:")
                    .execute();
            assertThat(code).isEqualTo(69);
            assertThat(env.err())
                    .contains("cannot listen on 127.0.0.1:" + taken.getLocalPort())
                    .contains("choose another with --port");
        }
    }

    @Test
    void badOptionsExitTwo() {
        TestEnvironment env = new TestEnvironment(home);
        assertThat(env.parse("console", "--port", "70000").execute()).isEqualTo(2);
        assertThat(env.err()).contains("--port must be 0 to 65535");
        TestEnvironment bind = new TestEnvironment(home);
        assertThat(bind.parse("console", "--bind", "no-such-host.invalid", "--backend", "mem:")
                        .execute())
                .isEqualTo(2);
        assertThat(bind.err()).contains("--bind: unknown address 'no-such-host.invalid'");
    }

    @Test
    void aConsoleBoundToAnotherLoopbackAddressAnswersItsOwnUrl() throws Exception {
        try (CliProcesses cli = new CliProcesses(home)) {
            CliProcesses.Running console =
                    cli.start("console", "--bind", "127.0.0.2", "--port", "0", "--backend", "mem:");
            long deadline = System.nanoTime() + 60_000_000_000L;
            while (!console.out().contains("/  (store") && System.nanoTime() < deadline) {
                assertThat(console.process.isAlive()).as(console.err()).isTrue();
                Thread.sleep(50);
            }
            Matcher url = Pattern.compile("dlock console: (http://127\\.0\\.0\\.2:\\d+/)")
                    .matcher(console.out());
            assertThat(url.find()).as(console.out()).isTrue();
            HttpResponse<String> page = HttpClient.newHttpClient()
                    .send(
                            HttpRequest.newBuilder(URI.create(url.group(1) + "api/locks"))
                                    .timeout(Duration.ofSeconds(10))
                                    .build(),
                            HttpResponse.BodyHandlers.ofString());
            assertThat(page.statusCode()).as(page.body()).isEqualTo(200);
            assertThat(page.body()).contains("\"locks\":[]");
            assertThat(console.err()).doesNotContain("WARNING");
        }
    }

    @Test
    void anyAddressIsWarnedAbout() throws Exception {
        try (CliProcesses cli = new CliProcesses(home)) {
            CliProcesses.Running console =
                    cli.start("console", "--bind", "0.0.0.0", "--port", "0", "--backend", "mem:");
            long deadline = System.nanoTime() + 60_000_000_000L;
            while (!console.out().contains("dlock console: http://") && System.nanoTime() < deadline) {
                assertThat(console.process.isAlive()).as(console.err()).isTrue();
                Thread.sleep(50);
            }
            assertThat(console.out()).contains("dlock console: http://127.0.0.1:");
            assertThat(console.err())
                    .contains(
                            "WARNING: the console listens on 0.0.0.0, reachable from other machines without any login");
        }
    }
}
