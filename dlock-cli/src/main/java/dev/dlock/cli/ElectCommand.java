package dev.dlock.cli;

import dev.dlock.LeaderElection;
import dev.dlock.Lease;
import dev.dlock.LeaseLostException;
import dev.dlock.LockClient;
import dev.dlock.LockException;
import java.io.IOException;
import java.time.Duration;
import java.util.List;
import java.util.Map;
import java.util.OptionalInt;
import java.util.concurrent.CancellationException;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.ExecutionException;
import java.util.concurrent.atomic.AtomicReference;
import picocli.CommandLine;
import picocli.CommandLine.Command;
import picocli.CommandLine.Mixin;
import picocli.CommandLine.Option;
import picocli.CommandLine.Parameters;

/**
 * {@code dlock elect NAME [--lease D] [--grace D] -- CMD [ARGS...]}: campaigns in election NAME ({@link
 * LockClient#election}) and runs CMD while this process leads, with {@code DLOCK_NAME} and {@code DLOCK_TERM}
 * (the term's fencing token, also as {@code DLOCK_FENCING_TOKEN}) in its environment. A term that is lost
 * stops CMD (SIGTERM to it and its descendants, SIGKILL after {@code --grace}), and the process campaigns
 * again: CMD runs anew in its next term. When CMD exits by itself, dlock resigns, so another candidate is
 * elected, and exits with CMD's code.
 *
 * <p>Concurrency: the main thread waits for each term and then for CMD. The term's lost-signal (a client
 * thread) stops CMD. A JVM shutdown hook (Ctrl-C, SIGTERM) stops CMD the same way, then resigns and closes
 * the client, which ends a wait for the next term.
 *
 * <p>Failure modes: a store that is down when we start fails within the operation timeout (exit 69); later
 * store failures end the term at its local deadline (CMD is stopped) and the candidate keeps campaigning,
 * retrying the store, until it is elected again or interrupted.
 */
@Command(
        name = "elect",
        sortOptions = false,
        customSynopsis = {
            "dlock elect NAME [--lease DURATION] [--grace DURATION] [--backend URI] [--namespace NS] -- CMD [ARGS...]"
        },
        description = {
            "Campaign to lead election NAME; run CMD while leader, stop it when the leadership is lost and",
            "campaign again. CMD gets DLOCK_NAME and DLOCK_TERM (the term's fencing token, strictly increasing",
            "from leader to leader; also DLOCK_FENCING_TOKEN). When CMD exits by itself dlock resigns and exits",
            "with CMD's exit code. A NAME starting with '-' goes after '--': dlock elect -- -NAME -- CMD."
        })
final class ElectCommand implements Plan, Main.Validated {
    @Parameters(index = "0", paramLabel = "NAME", description = "The election's name (the name of its lock).")
    String name;

    @Parameters(
            index = "1..*",
            arity = "1..*",
            paramLabel = "CMD",
            description = "The command and its arguments (put them after --).")
    List<String> command;

    @Option(
            names = "--lease",
            paramLabel = "DURATION",
            defaultValue = "30s",
            description = "Lease time of a term, renewed while leading: how long a leader that died keeps the"
                    + " leadership (default: ${DEFAULT-VALUE}).")
    Duration leaseTime;

    @Option(
            names = "--grace",
            paramLabel = "DURATION",
            defaultValue = "10s",
            description = "When the leadership is lost or on Ctrl-C: time between SIGTERM and SIGKILL to CMD "
                    + "(default: ${DEFAULT-VALUE}).")
    Duration grace;

    @Mixin
    BackendOption backend;

    private final Environment env;
    private final Object stateLock = new Object();
    private LockClient client;
    private LeaderElection election;
    private Process child;
    private boolean finished;

    ElectCommand(Environment env) {
        this.env = env;
    }

    @Override
    public void validate(CommandLine self) {
        command = GuardedCommand.checkNameAndCommand(self, name, command);
        GuardedCommand.checkLeaseTime(self, leaseTime);
    }

    @Override
    public int execute() {
        return GuardedCommand.withShutdownHook(this::onShutdown, () -> Main.guarded(env, this::lead), this::finish);
    }

    private int lead() throws InterruptedException {
        LockClient connected = backend.builder().leaseTime(leaseTime).build();
        LeaderElection candidate = connected.election(name);
        synchronized (stateLock) {
            if (finished) {
                connected.close();
                return ExitCodes.INTERRUPTED;
            }
            client = connected;
            election = candidate;
        }
        connected.describe(name); // a store that is down fails here, within the operation timeout (exit 69)
        while (true) {
            Lease term = nextTerm(candidate);
            if (term == null) {
                return ExitCodes.INTERRUPTED;
            }
            env.err()
                    .println("dlock: elected leader of '" + name + "' (term " + term.fencingToken() + "); running "
                            + command.get(0));
            OptionalInt exited = runWhileLeading(term);
            if (exited.isPresent()) {
                return exited.getAsInt(); // finish() resigns
            }
            env.err().println("dlock: campaigning again for '" + name + "'");
        }
    }

    /** Waits for the next valid term; null when the candidate resigned meanwhile (Ctrl-C). */
    private Lease nextTerm(LeaderElection candidate) throws InterruptedException {
        while (true) {
            CompletableFuture<Lease> next;
            synchronized (stateLock) {
                if (finished) {
                    return null;
                }
                next = candidate.join();
            }
            try {
                Lease term = next.get();
                if (term.isValid()) {
                    return term;
                }
                Thread.sleep(10); // a term lost as it was handed over: the candidate campaigns again
            } catch (CancellationException e) {
                return null;
            } catch (ExecutionException e) {
                if (e.getCause() instanceof CancellationException) {
                    return null;
                }
                if (e.getCause() instanceof LockException lockException) {
                    throw lockException;
                }
                throw new IllegalStateException(e.getCause());
            }
        }
    }

    /**
     * Runs CMD for one term.
     *
     * @return CMD's exit code when it ended by itself (or could not start), empty when the term was lost and
     *     CMD was stopped
     */
    private OptionalInt runWhileLeading(Lease term) throws InterruptedException {
        Process started;
        synchronized (stateLock) {
            if (finished) {
                return OptionalInt.of(ExitCodes.INTERRUPTED);
            }
            String token = Long.toString(term.fencingToken());
            try {
                started = GuardedCommand.start(
                        command, Map.of("DLOCK_NAME", name, "DLOCK_TERM", token, "DLOCK_FENCING_TOKEN", token));
            } catch (IOException e) {
                return OptionalInt.of(GuardedCommand.cannotStart(env, command, e));
            }
            child = started;
        }
        AtomicReference<LeaseLostException> lost = new AtomicReference<>();
        CompletableFuture<Void> watch = term.whenLost().thenAccept(reason -> {
            lost.set(reason);
            env.err()
                    .println("dlock: lost the leadership of '" + name + "' (" + reason.getMessage() + "); stopping "
                            + command.get(0) + " (SIGTERM, SIGKILL after " + Durations.format(grace) + ")");
            GuardedCommand.stop(started, grace);
        });
        int code = started.waitFor();
        watch.cancel(false);
        synchronized (stateLock) {
            child = null;
            if (finished) {
                return OptionalInt.of(ExitCodes.INTERRUPTED);
            }
        }
        return lost.get() != null ? OptionalInt.empty() : OptionalInt.of(code);
    }

    /** Ctrl-C or SIGTERM: stop CMD (waiting up to the grace period), resign, disconnect. */
    private void onShutdown() {
        Process running;
        synchronized (stateLock) {
            if (finished) {
                return;
            }
            running = child;
        }
        GuardedCommand.stopAndWait(running, grace);
        finish();
    }

    /** Once: resigns (ends a wait for the next term, releases a held term) and closes the client. */
    private void finish() {
        LockClient toClose;
        LeaderElection toResign;
        synchronized (stateLock) {
            if (finished) {
                return;
            }
            finished = true;
            toClose = client;
            toResign = election;
        }
        try {
            if (toResign != null) {
                toResign.close();
            }
        } catch (RuntimeException e) {
            env.err()
                    .println("dlock: could not resign from '" + name + "' (" + e.getMessage()
                            + "); the store frees the leadership when the lease runs out");
        }
        if (toClose != null) {
            try {
                toClose.close();
            } catch (RuntimeException e) {
                env.err().println("dlock: closing the client failed: " + e.getMessage());
            }
        }
    }
}
