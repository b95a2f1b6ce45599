package dev.dlock.testsupport;

import java.io.IOException;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.ArrayList;
import java.util.List;
import java.util.Set;
import java.util.concurrent.ConcurrentHashMap;
import java.util.concurrent.ExecutionException;
import java.util.concurrent.ExecutorService;
import java.util.concurrent.Executors;
import java.util.concurrent.Future;
import java.util.concurrent.TimeUnit;

/**
 * Starts the processes of tests, the fault suite and the bench (servers, client JVMs) so that none
 * outlives the JVM that started it, even when that JVM is killed with SIGKILL.
 *
 * <p>Design: on Linux with util-linux's {@code setpriv} (Debian ships it in every install) a command
 * runs as {@code setpriv --pdeathsig KILL -- command...}: setpriv asks the kernel to SIGKILL it when its
 * parent goes and then executes the command in its own place, so the {@link Process} and its pid are the
 * server's own (a test can still signal or kill it). The kernel counts the <em>thread</em> that forked
 * the child as its parent, so every start runs on one daemon thread that lives as long as the JVM; a
 * test thread or pool thread that ends would otherwise kill the servers it started. A credential change
 * clears the signal, so a command that itself runs {@code setpriv} to become another user gets the
 * option in that call instead. A shutdown hook kills what still runs, descendants included (e.g.
 * PostgreSQL's backends), when the JVM exits normally, and is the only guard where setpriv is missing.
 *
 * <p>The process-lifetime rule of dlock's tests, fault suite and bench: every long-lived process is
 * started here, and its owner (a launcher such as {@link RedisProcess} or {@link EtcdServers}) kills it
 * in its {@code close()} with {@link #killTree}; the JVM's end kills whatever an owner did not close.
 *
 * <pre>{@code
 * Process redis = ChildProcesses.start(new ProcessBuilder("redis-server", "--port", "7000"));
 * }</pre>
 */
public final class ChildProcesses {
    private static final Path SETPRIV = Path.of("/usr/bin/setpriv");
    private static final boolean TIED =
            System.getProperty("os.name").startsWith("Linux") && Files.isExecutable(SETPRIV);
    private static final Set<Process> STARTED = ConcurrentHashMap.newKeySet();
    private static final ExecutorService SPAWNER = Executors.newSingleThreadExecutor(task -> {
        Thread thread = new Thread(task, "child-process-spawner");
        thread.setDaemon(true);
        return thread;
    });

    static {
        Runtime.getRuntime().addShutdownHook(new Thread(ChildProcesses::killAll, "child-process-reaper"));
    }

    private ChildProcesses() {}

    /**
     * Starts the builder's command tied to this JVM's lifetime. The builder is left as it was.
     *
     * @param builder the command, directory, environment and redirects; not null, with a command
     * @return the started process (the command's own pid, not a wrapper's)
     * @throws IOException when the command cannot be started
     * @throws IllegalArgumentException when the builder has no command
     */
    public static Process start(ProcessBuilder builder) throws IOException {
        List<String> command = builder.command();
        if (command.isEmpty()) {
            throw new IllegalArgumentException("the process builder has no command");
        }
        List<String> tied = TIED ? tiedCommand(command) : command;
        Future<Process> started = SPAWNER.submit(() -> {
            synchronized (builder) {
                builder.command(tied);
                try {
                    return builder.start();
                } finally {
                    builder.command(command);
                }
            }
        });
        Process process = await(started);
        STARTED.add(process);
        process.onExit().thenRun(() -> STARTED.remove(process));
        return process;
    }

    /**
     * Whether processes started here die with this JVM even when it is killed (Linux with {@code
     * /usr/bin/setpriv}); otherwise only a normal exit stops them.
     *
     * @return true when the kernel kills them with the JVM
     */
    public static boolean diesWithJvm() {
        return TIED;
    }

    /**
     * Sends a signal to a process and all its descendants (e.g. {@code STOP} and {@code CONT} to freeze and
     * thaw a server, {@code KILL}), through {@code kill(1)}.
     *
     * @param pid the process
     * @param signal the signal's name without {@code SIG}
     * @throws IllegalStateException when {@code kill} cannot be run or the wait for it is interrupted
     */
    public static void signalTree(long pid, String signal) {
        List<String> command = new ArrayList<>(List.of("kill", "-" + signal, Long.toString(pid)));
        ProcessHandle.of(pid).ifPresent(h -> h.descendants().forEach(d -> command.add(Long.toString(d.pid()))));
        try {
            Process kill = new ProcessBuilder(command).redirectErrorStream(true).start();
            kill.getInputStream().readAllBytes();
            kill.waitFor(10, TimeUnit.SECONDS);
        } catch (IOException e) {
            throw new IllegalStateException("cannot run " + String.join(" ", command), e);
        } catch (InterruptedException e) {
            Thread.currentThread().interrupt();
            throw new IllegalStateException(e);
        }
    }

    /**
     * Kills a process and its descendants like a crash (SIGKILL, also when they are stopped) and waits up
     * to 15 seconds until the process is gone. Nothing happens for null or a process that ended.
     *
     * @param process the process, or null
     */
    public static void killTree(Process process) {
        if (process == null || !process.isAlive()) {
            return;
        }
        process.descendants().forEach(ProcessHandle::destroyForcibly);
        process.destroyForcibly();
        try {
            if (!process.waitFor(15, TimeUnit.SECONDS)) {
                throw new IllegalStateException("process " + process.pid() + " did not die of SIGKILL");
            }
        } catch (InterruptedException e) {
            Thread.currentThread().interrupt();
        }
    }

    static List<String> tiedCommand(List<String> command) {
        List<String> tied = new ArrayList<>();
        if (command.get(0).equals("setpriv") || command.get(0).equals(SETPRIV.toString())) {
            tied.add(command.get(0));
            tied.add("--pdeathsig");
            tied.add("KILL");
            tied.addAll(command.subList(1, command.size()));
        } else {
            tied.addAll(List.of(SETPRIV.toString(), "--pdeathsig", "KILL", "--"));
            tied.addAll(command);
        }
        return tied;
    }

    private static Process await(Future<Process> started) throws IOException {
        boolean interrupted = false;
        try {
            while (true) {
                try {
                    return started.get();
                } catch (InterruptedException e) {
                    // the start is under way and cannot be called back: wait for its process
                    interrupted = true;
                } catch (ExecutionException e) {
                    Throwable cause = e.getCause();
                    if (cause instanceof IOException io) {
                        throw io;
                    }
                    if (cause instanceof RuntimeException runtime) {
                        throw runtime;
                    }
                    throw new IllegalStateException(cause);
                }
            }
        } finally {
            if (interrupted) {
                Thread.currentThread().interrupt();
            }
        }
    }

    private static void killAll() {
        for (Process process : STARTED) {
            process.descendants().forEach(ProcessHandle::destroyForcibly);
            process.destroyForcibly();
        }
    }
}
