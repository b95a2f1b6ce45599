package dev.dlock.chaos;

import java.io.IOException;
import java.io.UncheckedIOException;
import java.nio.charset.StandardCharsets;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.Comparator;
import java.util.List;
import java.util.concurrent.TimeUnit;
import java.util.function.BooleanSupplier;
import java.util.stream.Stream;

/**
 * Small process helpers shared by the stores, the clients and the nemesis: run a command to its end,
 * wait for a condition, remove a directory. Starting, signalling and killing the long-lived processes,
 * and their ports, are dlock-test-support's ({@code ChildProcesses}, {@code FreePorts}).
 *
 * <p>Failure modes: a command that exits non-zero or outlives its timeout throws with its output, so a
 * store that cannot start says why.
 */
final class Proc {
    private Proc() {}

    /** Runs a command to its end and returns its output; throws unless it exits 0 within the timeout. */
    static String run(int timeoutSeconds, List<String> command) {
        try {
            Process p = new ProcessBuilder(command).redirectErrorStream(true).start();
            byte[] out = p.getInputStream().readAllBytes();
            if (!p.waitFor(timeoutSeconds, TimeUnit.SECONDS)) {
                p.destroyForcibly();
                throw new IllegalStateException("timed out: " + String.join(" ", command));
            }
            String text = new String(out, StandardCharsets.UTF_8);
            if (p.exitValue() != 0) {
                throw new IllegalStateException(
                        String.join(" ", command) + " exited " + p.exitValue() + ": " + text.strip());
            }
            return text;
        } catch (IOException e) {
            throw new IllegalStateException("cannot run " + command.get(0) + ": " + e.getMessage(), e);
        } catch (InterruptedException e) {
            Thread.currentThread().interrupt();
            throw new IllegalStateException(e);
        }
    }

    /** {@link #run(int, List)} with varargs and a 60 s timeout. */
    static String run(String... command) {
        return run(60, List.of(command));
    }

    /** Whether a command can be run at all (exit status ignored). */
    static boolean available(String... command) {
        try {
            Process p = new ProcessBuilder(command).redirectErrorStream(true).start();
            p.getInputStream().readAllBytes();
            return p.waitFor(20, TimeUnit.SECONDS) && p.exitValue() == 0;
        } catch (IOException e) {
            return false;
        } catch (InterruptedException e) {
            Thread.currentThread().interrupt();
            return false;
        }
    }

    /** Polls a condition every 50 ms until it holds; throws with {@code failure} after the deadline. */
    static void await(String failure, int seconds, BooleanSupplier condition) {
        await(() -> failure, seconds, condition);
    }

    /** {@link #await(String, int, BooleanSupplier)} with the failure message made when it is needed. */
    static void await(java.util.function.Supplier<String> failure, int seconds, BooleanSupplier condition) {
        long deadline = System.nanoTime() + TimeUnit.SECONDS.toNanos(seconds);
        while (true) {
            try {
                if (condition.getAsBoolean()) {
                    return;
                }
            } catch (Gone e) {
                throw e;
            } catch (RuntimeException notYet) {
                // keep waiting
            }
            if (System.nanoTime() > deadline) {
                throw new IllegalStateException(failure.get());
            }
            sleep(50);
        }
    }

    /** Thrown by an {@link #await} condition when waiting longer is pointless (the process died). */
    static final class Gone extends RuntimeException {
        private static final long serialVersionUID = 1L;

        Gone(String message) {
            super(message);
        }
    }

    static void sleep(long millis) {
        try {
            Thread.sleep(millis);
        } catch (InterruptedException e) {
            Thread.currentThread().interrupt();
            throw new IllegalStateException(e);
        }
    }

    /** Deletes a directory tree, ignoring what cannot be deleted. */
    static void deleteTree(Path dir) {
        if (dir == null || !Files.exists(dir)) {
            return;
        }
        try (Stream<Path> files = Files.walk(dir)) {
            files.sorted(Comparator.reverseOrder()).forEach(p -> p.toFile().delete());
        } catch (IOException | UncheckedIOException e) {
            // a leftover temporary directory is harmless
        }
    }

    /** The tail of a log file, for error messages. */
    static String tail(Path file) {
        try {
            String text = Files.readString(file);
            return text.length() > 2000 ? text.substring(text.length() - 2000) : text;
        } catch (IOException e) {
            return "(no log " + file + ")";
        }
    }
}
