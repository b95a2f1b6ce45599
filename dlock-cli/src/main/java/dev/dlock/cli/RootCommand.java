package dev.dlock.cli;

import picocli.CommandLine;
import picocli.CommandLine.Command;

/**
 * The top of the command tree: {@code dlock} itself, which only dispatches to its subcommands and carries
 * {@code --help}/{@code --version} (inherited by every subcommand) and the exit code list of the usage.
 */
@Command(
        name = "dlock",
        mixinStandardHelpOptions = true,
        scope = CommandLine.ScopeType.INHERIT,
        version = "dlock 0.1.0",
        description = "Distributed locks from the shell: a flock(1) that works across machines.",
        subcommands = {
            RunCommand.class,
            ElectCommand.class,
            StatusCommand.class,
            ListCommand.class,
            ReleaseCommand.class,
            ConsoleCommand.class,
            ServerCommand.class,
            DemoCommand.class,
            ServerProcessCommand.class,
            WorkerCommand.class
        },
        exitCodeListHeading = "%nExit codes:%n",
        exitCodeList = {
            "0:done (status: the lock is held)",
            "1:lock busy, wait timed out, lock free (status), or declined",
            "2:bad arguments",
            "69:the lock store is unavailable (console: or its port is in use)",
            "75:the lease was lost while CMD ran; CMD was stopped (run)",
            "126:CMD cannot be executed",
            "127:CMD not found",
            "130:interrupted (Ctrl-C)",
            "other:run and elect exit with CMD's exit code"
        })
final class RootCommand {}
