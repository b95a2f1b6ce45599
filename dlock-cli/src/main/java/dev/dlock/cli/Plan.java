package dev.dlock.cli;

/**
 * A parsed {@code dlock} command line, ready to run. {@link Main#fromArgs(String...)} makes one from the
 * arguments without touching any store, so parsing is tested without starting a process.
 */
public interface Plan {
    /**
     * Runs the command.
     *
     * @return the process exit code (see the exit codes in {@link Main})
     */
    int execute();
}
