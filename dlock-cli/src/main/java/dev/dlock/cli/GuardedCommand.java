package dev.dlock.cli;

import java.io.IOException;
import java.time.Duration;
import java.util.ArrayList;
import java.util.List;
import java.util.Map;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.ExecutionException;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.TimeoutException;
import java.util.function.IntSupplier;
import picocli.CommandLine;
import picocli.CommandLine.ParameterException;

/**
 * The CMD that {@code run} and {@code elect} start and stop: started with the terminal's I/O and dlock's
 * variables in its environment; stopped as a tree, SIGTERM first and SIGKILL after a grace period.
 *
 * <p>Concurrency: stateless; {@link #stop} returns at once, the SIGKILL comes from the common delayed
 * executor.
 */
final class GuardedCommand {
    private GuardedCommand() {}

    /**
     * Checks {@code --lease}: a lease under 100 ms would be renewed every 33 ms or less.
     *
     * @throws ParameterException if it is shorter
     */
    static void checkLeaseTime(CommandLine self, Duration leaseTime) {
        if (leaseTime.compareTo(Duration.ofMillis(100)) < 0) {
            throw new ParameterException(self, "--lease must be at least 100ms, got " + leaseTime.toMillis() + "ms");
        }
    }

    /**
     * Checks NAME and CMD as parsed from {@code NAME -- CMD} or {@code -- -NAME -- CMD} and returns CMD.
     *
     * @throws ParameterException if NAME is empty or CMD is missing
     */
    static List<String> checkNameAndCommand(CommandLine self, String name, List<String> command) {
        if (name.isEmpty()) {
            throw new ParameterException(self, "NAME must not be empty");
        }
        // A NAME starting with '-' comes after the first "--" (dlock run [OPTIONS] -- -NAME -- CMD); the second
        // one then reaches us as the first word of CMD, which no command is called.
        if (command.get(0).equals("--")) {
            command = command.subList(1, command.size());
            if (command.isEmpty()) {
                throw new ParameterException(self, "CMD is missing after '" + name + " --'");
            }
        }
        return command;
    }

    /** Starts CMD with these variables added to dlock's own environment. */
    static Process start(List<String> command, Map<String, String> variables) throws IOException {
        ProcessBuilder builder = new ProcessBuilder(command).inheritIO();
        builder.environment().putAll(variables);
        return builder.start();
    }

    /** Tells why CMD could not start; returns the shell's exit code for it: 127 not found, else 126. */
    static int cannotStart(Environment env, List<String> command, IOException e) {
        env.err().println("dlock: cannot run " + command.get(0) + ": " + e.getMessage());
        return e.getMessage() != null && e.getMessage().contains("error=2,")
                ? ExitCodes.NOT_FOUND
                : ExitCodes.CANNOT_EXECUTE;
    }

    /**
     * Runs a command body with a JVM shutdown hook (Ctrl-C, SIGTERM) installed, then {@code finish} (also
     * when the body throws), then removes the hook.
     */
    static int withShutdownHook(Runnable onShutdown, IntSupplier body, Runnable finish) {
        Thread hook = new Thread(onShutdown, "dlock-shutdown");
        Runtime.getRuntime().addShutdownHook(hook);
        try {
            return body.getAsInt();
        } finally {
            finish.run();
            try {
                Runtime.getRuntime().removeShutdownHook(hook);
            } catch (IllegalStateException e) {
                // the JVM is shutting down; the hook runs or ran and finds the work done
            }
        }
    }

    /** Stops CMD if it still runs, and waits for it up to the grace period (and a second), else kills it. */
    static void stopAndWait(Process process, Duration grace) {
        if (process == null || !process.isAlive()) {
            return;
        }
        stop(process, grace);
        try {
            process.onExit().get(grace.toMillis() + 1_000, TimeUnit.MILLISECONDS);
        } catch (InterruptedException | ExecutionException | TimeoutException e) {
            process.destroyForcibly();
        }
    }

    /** SIGTERM to the process and its descendants, SIGKILL to those alive after the grace period. */
    static void stop(Process process, Duration grace) {
        List<ProcessHandle> tree = new ArrayList<>(process.descendants().toList());
        tree.add(0, process.toHandle());
        tree.forEach(ProcessHandle::destroy);
        CompletableFuture.runAsync(
                () -> tree.stream().filter(ProcessHandle::isAlive).forEach(ProcessHandle::destroyForcibly),
                CompletableFuture.delayedExecutor(grace.toMillis(), TimeUnit.MILLISECONDS));
    }
}
