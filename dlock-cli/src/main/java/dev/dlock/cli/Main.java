package dev.dlock.cli;

import dev.dlock.LockBackendException;
import java.io.PrintWriter;
import java.lang.reflect.Constructor;
import java.time.Duration;
import java.util.List;
import java.util.concurrent.Callable;
import picocli.CommandLine;
import picocli.CommandLine.ParameterException;
import picocli.CommandLine.ParseResult;

/**
 * The {@code dlock} command: run a command under a distributed lock, look at and manage locks, run the local
 * ZooKeeper server, and the flash-sale demo.
 *
 * <h2>Commands</h2>
 *
 * <pre>
 * dlock run NAME [--wait 10s | --nonblock] [--lease 30s] [--backend URI] -- CMD [ARGS...]
 * dlock elect NAME [--lease 30s] [--grace 10s] [--backend URI] -- CMD [ARGS...]
 * dlock status NAME
 * dlock ls [PREFIX]
 * dlock release --force NAME [--yes]
 * dlock console [--port 7070] [--bind 127.0.0.1] [--allow-release] [--backend URI]
 * dlock server start|stop|status
 * dlock demo [--stock 100] [--buyers 2000] [--workers 4] [--backend URI]...
 * </pre>
 *
 * <h2>Exit codes</h2>
 *
 * <p>0 done (for {@code status}: held); 1 lock busy, wait timed out, free, or declined; 2 bad arguments;
 * 69 store unavailable; 70 internal error; 75 the lease was lost while CMD ran; 126/127 CMD not executable
 * or not found; 130 Ctrl-C; otherwise {@code run} and {@code elect} exit with CMD's exit code.
 *
 * <p>Parsing ({@link #fromArgs(String...)}) is separate from running ({@link Plan#execute()}).
 *
 * <p>Concurrency: one command per process; {@code run} adds a shutdown hook of its own. Failure modes:
 * bad arguments exit 2 with the usage; store failures 69; anything unexpected, even an {@link Error},
 * prints its stack trace and exits 70 rather than leaving the JVM up on non-daemon threads.
 */
public final class Main {
    private Main() {}

    /**
     * Parses the arguments, runs the command and exits with its exit code.
     *
     * @param args the command line
     */
    public static void main(String... args) {
        int code;
        try {
            code = fromArgs(args).execute();
        } catch (Throwable e) { // an Error must not leave the JVM running on non-daemon threads
            e.printStackTrace();
            code = ExitCodes.SOFTWARE;
        }
        System.out.flush();
        System.err.flush();
        System.exit(code);
    }

    /**
     * Parses a command line without running anything. Bad arguments give a plan that prints the problem and
     * the usage to standard error and exits with 2; {@code --help} and {@code --version} give one that
     * prints to standard output and exits with 0.
     *
     * @param args the command line, without the program name
     * @return the command to run
     */
    public static Plan fromArgs(String... args) {
        return fromArgs(Environment.system(), args);
    }

    static Plan fromArgs(Environment env, String... args) {
        CommandLine root = commandLine(env);
        try {
            ParseResult result = root.parseArgs(args);
            List<CommandLine> parsed = result.asCommandLineList();
            for (CommandLine command : parsed) {
                if (command.isUsageHelpRequested()) {
                    return () -> {
                        command.usage(env.out());
                        return ExitCodes.OK;
                    };
                }
                if (command.isVersionHelpRequested()) {
                    return () -> {
                        command.printVersionHelp(env.out());
                        return ExitCodes.OK;
                    };
                }
            }
            CommandLine last = parsed.get(parsed.size() - 1);
            Object command = last.getCommand();
            if (command instanceof Validated validated) {
                validated.validate(last);
            }
            if (command instanceof Plan plan) {
                return plan;
            }
            throw new ParameterException(last, "Missing command");
        } catch (ParameterException e) {
            CommandLine where = e.getCommandLine();
            return () -> {
                env.err().println("dlock: " + e.getMessage());
                where.usage(env.err());
                return ExitCodes.USAGE;
            };
        }
    }

    private static CommandLine commandLine(Environment env) {
        CommandLine root = new CommandLine(RootCommand.class, new Factory(env));
        root.registerConverter(Duration.class, new Durations());
        root.setCaseInsensitiveEnumValuesAllowed(true);
        root.setOut(new PrintWriter(env.out(), true));
        root.setErr(new PrintWriter(env.err(), true));
        return root;
    }

    /** A command that checks its options together after parsing (e.g. options that exclude each other). */
    interface Validated {
        void validate(CommandLine self);
    }

    /**
     * Runs a command body, turning the failures every command shares into a message on standard error and an
     * exit code: a store failure is 69 (its credentials refused, or it failed), a bad URI or setting 2, a local
     * server that cannot start 69.
     */
    static int guarded(Environment env, Callable<Integer> body) {
        try {
            return body.call();
        } catch (LockBackendException e) {
            String refused = StoreFailures.credentialsRefused(e);
            env.err()
                    .println(
                            refused != null
                                    ? "dlock: the lock store refused the credentials: " + refused
                                            + " Check the user and password in the backend URI (" + e.getMessage()
                                            + ")"
                                    : "dlock: the lock store failed: " + e.getMessage());
            return ExitCodes.UNAVAILABLE;
        } catch (IllegalArgumentException e) {
            env.err().println("dlock: " + e.getMessage());
            return ExitCodes.USAGE;
        } catch (IllegalStateException e) {
            env.err().println("dlock: " + e.getMessage());
            return ExitCodes.UNAVAILABLE;
        } catch (InterruptedException e) {
            Thread.currentThread().interrupt();
            env.err().println("dlock: interrupted");
            return ExitCodes.INTERRUPTED;
        } catch (Exception e) {
            env.err().println("dlock: " + e);
            return ExitCodes.SOFTWARE;
        }
    }

    /** Makes command objects, handing those that want it the {@link Environment}. */
    private static final class Factory implements CommandLine.IFactory {
        private final Environment env;

        Factory(Environment env) {
            this.env = env;
        }

        @Override
        public <K> K create(Class<K> type) throws Exception {
            try {
                Constructor<K> constructor = type.getDeclaredConstructor(Environment.class);
                constructor.setAccessible(true);
                return constructor.newInstance(env);
            } catch (NoSuchMethodException e) {
                return CommandLine.defaultFactory().create(type);
            }
        }
    }
}
