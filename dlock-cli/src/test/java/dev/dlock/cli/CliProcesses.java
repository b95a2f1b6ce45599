package dev.dlock.cli;

import dev.dlock.testsupport.ChildProcesses;
import java.io.IOException;
import java.nio.charset.StandardCharsets;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.ArrayList;
import java.util.List;
import java.util.Map;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.atomic.AtomicInteger;

/**
 * Starts the {@code dlock} command as real child JVMs ({@code java -cp <test class path> dev.dlock.cli.Main
 * ...}) with the config and state directories pointed at temp dirs, and stops every process it started
 * (and the local server) in {@link #close()}.
 */
final class CliProcesses implements AutoCloseable {
    private static final AtomicInteger SEQUENCE = new AtomicInteger();

    final Path stateDir;
    final Path configDir;
    private final Path outputDir;
    private final List<Process> started = new ArrayList<>();

    CliProcesses(Path root) throws IOException {
        this.stateDir = Files.createDirectories(root.resolve("state"));
        this.configDir = Files.createDirectories(root.resolve("config"));
        this.outputDir = Files.createDirectories(root.resolve("output"));
    }

    /** A finished command: exit code and what it printed. */
    record Result(int code, String out, String err) {}

    /** A started command. */
    final class Running {
        final Process process;
        private final Path out;
        private final Path err;

        Running(Process process, Path out, Path err) {
            this.process = process;
            this.out = out;
            this.err = err;
        }

        Result await(long seconds) throws Exception {
            if (!process.waitFor(seconds, TimeUnit.SECONDS)) {
                throw new AssertionError("dlock did not exit within " + seconds + "s; stderr so far: " + read(err)
                        + "\nits threads:\n" + threadDump(process));
            }
            return new Result(process.exitValue(), read(out), read(err));
        }

        String err() throws IOException {
            return read(err);
        }

        String out() throws IOException {
            return read(out);
        }
    }

    Running start(String... args) throws IOException {
        return start(Map.of(), args);
    }

    Running start(Map<String, String> extraEnv, String... args) throws IOException {
        int n = SEQUENCE.incrementAndGet();
        Path out = outputDir.resolve(n + ".out");
        Path err = outputDir.resolve(n + ".err");
        ProcessBuilder builder = new ProcessBuilder(withDefaultInterrupt(
                        JavaCommand.forMain(List.of("-XX:+UseSerialGC", "-XX:TieredStopAtLevel=1"), args)))
                .redirectOutput(out.toFile())
                .redirectError(err.toFile())
                .redirectInput(ProcessBuilder.Redirect.from(new java.io.File("/dev/null")));
        Map<String, String> env = builder.environment();
        env.remove("DLOCK_BACKEND");
        env.remove("XDG_CONFIG_HOME");
        env.remove("XDG_STATE_HOME");
        env.put("DLOCK_STATE_DIR", stateDir.toString());
        env.put("DLOCK_CONFIG_DIR", configDir.toString());
        env.putAll(extraEnv);
        Process process = ChildProcesses.start(builder);
        synchronized (started) {
            started.add(process);
        }
        return new Running(process, out, err);
    }

    /**
     * The command run through {@code env --default-signal=INT} (which then executes it in its own place):
     * a JVM keeps SIGINT ignored when it starts with it ignored, as every command started in the background
     * by a non-interactive shell does (scripts/test.sh's Maven, for one), and then Ctrl-C, which these tests
     * send as SIGINT, would not reach dlock. A terminal's foreground command starts with the default.
     */
    private static List<String> withDefaultInterrupt(List<String> command) {
        List<String> wrapped = new ArrayList<>(List.of("env", "--default-signal=INT"));
        wrapped.addAll(command);
        return wrapped;
    }

    Result run(String... args) throws Exception {
        return start(args).await(60);
    }

    /** Local server processes of this state directory, found by their command line. */
    List<ProcessHandle> serverProcesses() {
        return ProcessHandle.allProcesses()
                .filter(p -> {
                    String line = commandLine(p);
                    return line.contains("server-process") && line.contains(stateDir.toString());
                })
                .toList();
    }

    /** The full command line from /proc (ProcessHandle.Info cuts long ones, such as a test class path). */
    private static String commandLine(ProcessHandle process) {
        try {
            byte[] raw = Files.readAllBytes(Path.of("/proc", Long.toString(process.pid()), "cmdline"));
            return new String(raw, StandardCharsets.UTF_8).replace('\0', ' ');
        } catch (IOException e) {
            return ""; // exited meanwhile
        }
    }

    /** The threads of a JVM that did not exit, to show where it hangs ({@code jcmd PID Thread.print}). */
    private static String threadDump(Process process) throws IOException, InterruptedException {
        Path jcmd = Path.of(System.getProperty("java.home"), "bin", "jcmd");
        Process dump = new ProcessBuilder(jcmd.toString(), Long.toString(process.pid()), "Thread.print")
                .redirectErrorStream(true)
                .start();
        String printed = new String(dump.getInputStream().readAllBytes(), StandardCharsets.UTF_8);
        return dump.waitFor(30, TimeUnit.SECONDS) ? printed : "(jcmd did not answer)";
    }

    private static String read(Path file) throws IOException {
        return Files.exists(file) ? Files.readString(file, StandardCharsets.UTF_8) : "";
    }

    @Override
    public void close() {
        synchronized (started) {
            for (Process process : started) {
                process.descendants().forEach(ProcessHandle::destroyForcibly);
                process.destroyForcibly();
            }
        }
        LocalServer.in(stateDir).stop();
        serverProcesses().forEach(ProcessHandle::destroyForcibly);
    }
}
