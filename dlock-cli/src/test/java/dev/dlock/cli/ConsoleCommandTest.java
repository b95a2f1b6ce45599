package dev.dlock.cli;

import static org.assertj.core.api.Assertions.assertThat;

import java.net.InetAddress;
import java.net.ServerSocket;
import java.nio.file.Path;
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
