package dev.dlock.cli;

/** The exit codes of the {@code dlock} command, in one place so that docs and tests agree. */
final class ExitCodes {
    /** Done; for {@code status}: the lock is held. */
    static final int OK = 0;

    /** The lock is busy ({@code --nonblock}), the wait timed out, {@code status}: free, or the user said no. */
    static final int BUSY = 1;

    /** Bad arguments: the usage is printed. */
    static final int USAGE = 2;

    /** The store could not be reached or failed (sysexits EX_UNAVAILABLE). */
    static final int UNAVAILABLE = 69;

    /** An unexpected internal error (sysexits EX_SOFTWARE). */
    static final int SOFTWARE = 70;

    /** The lease was lost while the command ran; the command was stopped (sysexits EX_TEMPFAIL). */
    static final int LEASE_LOST = 75;

    /** The command was found but could not be executed (as in a shell). */
    static final int CANNOT_EXECUTE = 126;

    /** The command was not found (as in a shell). */
    static final int NOT_FOUND = 127;

    /** Interrupted by Ctrl-C (128 + SIGINT). */
    static final int INTERRUPTED = 130;

    private ExitCodes() {}
}
