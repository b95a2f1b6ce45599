package dev.dlock.cli;

import java.util.Optional;
import picocli.CommandLine.Command;

/**
 * {@code dlock server start|stop|status}: the local ZooKeeper server that the default backend uses, started
 * on first use by any command; see {@link LocalServer}.
 */
@Command(
        name = "server",
        description = "Manage the local ZooKeeper server used when no backend is configured.",
        subcommands = {ServerCommand.Start.class, ServerCommand.Stop.class, ServerCommand.Status.class})
final class ServerCommand {
    private ServerCommand() {}

    /** {@code dlock server start}: starts the server unless it runs; prints where it listens. */
    @Command(name = "start", description = "Start the local server (no-op if it runs).")
    static final class Start implements Plan {
        private final Environment env;

        Start(Environment env) {
            this.env = env;
        }

        @Override
        public int execute() {
            return Main.guarded(env, () -> {
                LocalServer server = LocalServer.in(env.stateDir());
                LocalServer.Info info = server.ensureRunning();
                env.out().println(describe(server, info));
                return ExitCodes.OK;
            });
        }
    }

    /** {@code dlock server stop}: stops the server; exits 1 if none ran. */
    @Command(name = "stop", description = "Stop the local server. Exits 1 if it was not running.")
    static final class Stop implements Plan {
        private final Environment env;

        Stop(Environment env) {
            this.env = env;
        }

        @Override
        public int execute() {
            return Main.guarded(env, () -> {
                Optional<LocalServer.Info> stopped =
                        LocalServer.in(env.stateDir()).stop();
                env.out()
                        .println(stopped.map(info -> "stopped the local server (pid " + info.pid() + ")")
                                .orElse("the local server is not running"));
                return stopped.isPresent() ? ExitCodes.OK : ExitCodes.BUSY;
            });
        }
    }

    /** {@code dlock server status}: exits 0 when the server runs, 1 otherwise. */
    @Command(name = "status", description = "Show the local server. Exits 0 if it runs, 1 if not.")
    static final class Status implements Plan {
        private final Environment env;

        Status(Environment env) {
            this.env = env;
        }

        @Override
        public int execute() {
            return Main.guarded(env, () -> {
                LocalServer server = LocalServer.in(env.stateDir());
                Optional<LocalServer.Info> info = server.status();
                env.out()
                        .println(info.map(running -> describe(server, running))
                                .orElse("the local server is not running (state in " + server.stateDir() + ")"));
                return info.isPresent() ? ExitCodes.OK : ExitCodes.BUSY;
            });
        }
    }

    private static String describe(LocalServer server, LocalServer.Info info) {
        return "local ZooKeeper server running: " + info.uri() + " (pid " + info.pid() + ", data " + server.dataDir()
                + ", log " + server.logFile() + ")";
    }
}
