package dev.dlock.testsupport;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;

import java.io.BufferedReader;
import java.io.IOException;
import java.io.InputStreamReader;
import java.nio.charset.StandardCharsets;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.List;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.atomic.AtomicReference;
import org.junit.jupiter.api.Test;

/** Processes started through {@link ChildProcesses} end with the JVM that started them. */
class ChildProcessesTest {

    /** A JVM that starts {@code sleep 300} through ChildProcesses, prints its pid and waits to be killed. */
    public static final class Parent {
        public static void main(String[] args) throws Exception {
            Process sleeper = ChildProcesses.start(new ProcessBuilder("sleep", "300"));
            System.out.println(sleeper.pid());
            System.out.flush();
            Thread.sleep(TimeUnit.MINUTES.toMillis(5));
        }
    }

    @Test
    void aChildDiesWhenItsJvmIsKilled() throws Exception {
        requireLinux();
        String java = ProcessHandle.current().info().command().orElseThrow();
        Process parent = ChildProcesses.start(
                new ProcessBuilder(java, "-cp", System.getProperty("java.class.path"), Parent.class.getName())
                        .redirectErrorStream(true));
        long child = -1;
        try {
            BufferedReader out =
                    new BufferedReader(new InputStreamReader(parent.getInputStream(), StandardCharsets.US_ASCII));
            child = Long.parseLong(out.readLine().strip());
            assertThat(running(child)).as("sleep started").isTrue();

            parent.destroyForcibly(); // SIGKILL: no shutdown hook runs
            assertThat(parent.waitFor(30, TimeUnit.SECONDS)).isTrue();

            long deadline = System.nanoTime() + TimeUnit.SECONDS.toNanos(10);
            while (running(child) && System.nanoTime() < deadline) {
                Thread.sleep(20);
            }
            assertThat(running(child))
                    .as("sleep %d outlived its killed JVM", child)
                    .isFalse();
        } finally {
            parent.destroyForcibly();
            if (child > 0) {
                ProcessHandle.of(child).ifPresent(ProcessHandle::destroyForcibly);
            }
        }
    }

    @Test
    void aChildOutlivesTheThreadThatStartedIt() throws Exception {
        requireLinux();
        AtomicReference<Process> started = new AtomicReference<>();
        AtomicReference<Exception> failed = new AtomicReference<>();
        Thread starter = new Thread(() -> {
            try {
                started.set(ChildProcesses.start(new ProcessBuilder("sleep", "300")));
            } catch (Exception e) {
                failed.set(e);
            }
        });
        starter.start();
        starter.join();
        assertThat(failed.get()).isNull();
        Process sleeper = started.get();
        try {
            // the kernel would kill it as soon as the thread that forked it is gone
            assertThat(sleeper.waitFor(1, TimeUnit.SECONDS))
                    .as("sleep ended with the thread that started it")
                    .isFalse();
        } finally {
            sleeper.destroyForcibly().waitFor(10, TimeUnit.SECONDS);
        }
    }

    @Test
    void theProcessIsTheCommandItselfNotAWrapper() throws Exception {
        Process sleeper = ChildProcesses.start(new ProcessBuilder("sleep", "300"));
        try {
            // setpriv runs first under the same pid and then becomes the command
            long deadline = System.nanoTime() + TimeUnit.SECONDS.toNanos(10);
            while (!commandName(sleeper).equals("sleep") && System.nanoTime() < deadline) {
                Thread.sleep(10);
            }
            assertThat(commandName(sleeper)).isEqualTo("sleep");
        } finally {
            sleeper.destroyForcibly().waitFor(10, TimeUnit.SECONDS);
        }
    }

    @Test
    void aStoppedTreeIsKilledWholeAndWaitedFor() throws Exception {
        Process shell = ChildProcesses.start(new ProcessBuilder("sh", "-c", "sleep 300 & wait"));
        long deadline = System.nanoTime() + TimeUnit.SECONDS.toNanos(10);
        while (shell.descendants().findAny().isEmpty() && System.nanoTime() < deadline) {
            Thread.sleep(10);
        }
        long child = shell.descendants().findAny().orElseThrow().pid();
        try {
            ChildProcesses.signalTree(shell.pid(), "STOP");
            deadline = System.nanoTime() + TimeUnit.SECONDS.toNanos(10);
            while (state(child) != 'T' && System.nanoTime() < deadline) {
                Thread.sleep(10);
            }
            assertThat(state(child)).as("sleep stopped with its shell").isEqualTo('T');

            ChildProcesses.killTree(shell);
            assertThat(shell.isAlive()).isFalse();
            deadline = System.nanoTime() + TimeUnit.SECONDS.toNanos(10);
            while (running(child) && System.nanoTime() < deadline) {
                Thread.sleep(20);
            }
            assertThat(running(child))
                    .as("sleep %d outlived its killed shell", child)
                    .isFalse();
        } finally {
            ProcessHandle.of(child).ifPresent(ProcessHandle::destroyForcibly);
        }
    }

    @Test
    void theBuilderIsLeftAsItWas() throws Exception {
        ProcessBuilder builder = new ProcessBuilder("true");
        ChildProcesses.start(builder).waitFor(10, TimeUnit.SECONDS);
        assertThat(builder.command()).containsExactly("true");
    }

    @Test
    void aCommandThatChangesUserGetsTheSignalInItsOwnSetprivCall() {
        // a second setpriv that changes the user would clear a signal set by an outer one
        assertThat(ChildProcesses.tiedCommand(List.of("setpriv", "--reuid=postgres", "postgres", "-D", "d")))
                .containsExactly("setpriv", "--pdeathsig", "KILL", "--reuid=postgres", "postgres", "-D", "d");
        assertThat(ChildProcesses.tiedCommand(List.of("redis-server", "--port", "1")))
                .containsExactly("/usr/bin/setpriv", "--pdeathsig", "KILL", "--", "redis-server", "--port", "1");
    }

    @Test
    void aBuilderWithoutCommandIsRefused() {
        assertThatThrownBy(() -> ChildProcesses.start(new ProcessBuilder()))
                .isInstanceOf(IllegalArgumentException.class)
                .hasMessageContaining("no command");
    }

    private static void requireLinux() {
        assertThat(ChildProcesses.diesWithJvm())
                .as("processes die with their JVM only on Linux with /usr/bin/setpriv (util-linux)")
                .isTrue();
    }

    private static String commandName(Process process) {
        return process.info()
                .command()
                .map(c -> Path.of(c).getFileName().toString())
                .orElse("");
    }

    /** Alive and not a zombie (a killed child whose reaper has not collected it yet is dead). */
    private static boolean running(long pid) {
        char state = state(pid);
        return state != 'Z' && state != 'X';
    }

    /** The state letter of /proc/PID/stat ({@code R}, {@code S}, {@code T}, ...), {@code X} when gone. */
    private static char state(long pid) {
        try {
            String text = Files.readString(Path.of("/proc", Long.toString(pid), "stat"));
            return text.charAt(text.lastIndexOf(')') + 2);
        } catch (IOException gone) {
            return 'X';
        }
    }
}
