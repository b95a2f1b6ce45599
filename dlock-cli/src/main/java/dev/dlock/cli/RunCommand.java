package dev.dlock.cli;

import dev.dlock.DistributedLock;
import dev.dlock.DistributedReadWriteLock;
import dev.dlock.DistributedSemaphore;
import dev.dlock.Lease;
import dev.dlock.LeaseLostException;
import dev.dlock.LockBackendException;
import dev.dlock.LockClient;
import dev.dlock.LockInfo;
import dev.dlock.LockKind;
import dev.dlock.LockTimeoutException;
import java.io.IOException;
import java.time.Duration;
import java.util.List;
import java.util.Map;
import java.util.Optional;
import java.util.concurrent.CancellationException;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.ExecutionException;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.TimeoutException;
import java.util.function.Function;
import java.util.function.Supplier;
import java.util.stream.Collectors;
import picocli.CommandLine;
import picocli.CommandLine.Command;
import picocli.CommandLine.Mixin;
import picocli.CommandLine.Option;
import picocli.CommandLine.ParameterException;
import picocli.CommandLine.Parameters;

/**
 * {@code dlock run NAME [--wait D | --nonblock] [--permits N | --shared | --exclusive] [--lease D] -- CMD
 * [ARGS...]} (a NAME starting with {@code -} goes after {@code --}: {@code dlock run [OPTIONS] -- -NAME -- CMD}): a
 * distributed flock, on a plain lock, a semaphore's permit or one side of a read-write lock. Waits for
 * the lock, runs CMD with {@code DLOCK_NAME} and {@code DLOCK_FENCING_TOKEN} in its environment while the
 * client renews the lease, releases when CMD exits and exits with CMD's code.
 *
 * <p>Concurrency: the main thread waits and then waits for CMD. The lease's lost-signal (a client thread)
 * stops CMD: SIGTERM to it and its descendants, SIGKILL to those still alive after {@code --grace}; the main
 * thread then exits 75. A JVM shutdown hook (Ctrl-C, SIGTERM) stops CMD the same way, cancels a pending wait
 * and closes the client, which releases the lock.
 *
 * <p>Failure modes: a store that is down when we start fails within the operation timeout (exit 69); while
 * CMD runs the client keeps renewing until the lease's local deadline, then the lease is lost (exit 75 as soon
 * as CMD has stopped: nothing waits for a store that hangs); a release that fails is reported, and the store
 * frees the lock when the lease runs out.
 */
@Command(
        name = "run",
        sortOptions = false,
        customSynopsis = {
            "dlock run NAME [-w DURATION | -n] [--permits N | --shared | --exclusive] [--lease DURATION]",
            "               [--grace DURATION] [--min-hold DURATION] [--backend URI] [--namespace NS] -- CMD [ARGS...]"
        },
        description = {
            "Wait for lock NAME, run CMD while holding it, release it when CMD exits.",
            "CMD gets DLOCK_NAME and DLOCK_FENCING_TOKEN in its environment; dlock exits with CMD's exit code.",
            "--permits N: at most N runs at once (semaphore NAME). --shared / --exclusive: the read and the",
            "write side of read-write lock NAME (like flock -s / -x); both are other locks than plain NAME.",
            "A NAME starting with '-' goes after '--', options before it: dlock run -w 5s -- -NAME -- CMD."
        })
final class RunCommand implements Plan, Main.Validated {
    static final Duration FOREVER = Duration.ofSeconds(Long.MAX_VALUE);

    @Parameters(index = "0", paramLabel = "NAME", description = "The lock name.")
    String name;

    @Parameters(
            index = "1..*",
            arity = "1..*",
            paramLabel = "CMD",
            description = "The command and its arguments (put them after --).")
    List<String> command;

    @Option(
            names = {"-w", "--wait"},
            paramLabel = "DURATION",
            description = "Give up after waiting this long (exit 1), e.g. 500ms, 10s, 2m. Default: wait forever.")
    Duration waitTime;

    @Option(
            names = {"-n", "--nonblock"},
            description = "Exit 1 at once if the lock is busy (like flock -n).")
    boolean nonblock;

    @Option(
            names = "--permits",
            paramLabel = "N",
            description = "Take one of N permits of semaphore NAME: at most N runs at once (all runs must say the"
                    + " same N).")
    Integer permits;

    @Option(
            names = {"-s", "--shared"},
            description = "Take read-write lock NAME shared: runs with --shared overlap, none with --exclusive.")
    boolean shared;

    @Option(
            names = {"-x", "--exclusive"},
            description = "Take read-write lock NAME exclusively: no other --shared or --exclusive run overlaps.")
    boolean exclusive;

    @Option(
            names = "--lease",
            paramLabel = "DURATION",
            defaultValue = "30s",
            description = "Lease time; the lease is renewed while CMD runs (default: ${DEFAULT-VALUE}).")
    Duration leaseTime;

    @Option(
            names = "--grace",
            paramLabel = "DURATION",
            defaultValue = "10s",
            description = "When the lease is lost or on Ctrl-C: time between SIGTERM and SIGKILL to CMD "
                    + "(default: ${DEFAULT-VALUE}).")
    Duration grace;

    @Option(
            names = "--min-hold",
            paramLabel = "DURATION",
            description = "Hold the lock at least this long from its grant, even when CMD ends sooner: dlock waits"
                    + " (renewing) until then, so that a job is not run again by a node whose clock is a little"
                    + " behind. Default: none.")
    Duration minHold;

    @Mixin
    BackendOption backend;

    private final Environment env;
    private final Object stateLock = new Object();
    private LockClient client;
    private CompletableFuture<Lease> pendingWait;
    private Process child;
    private boolean finished;
    private volatile LeaseLostException lostReason;

    RunCommand(Environment env) {
        this.env = env;
    }

    @Override
    public void validate(CommandLine self) {
        if (waitTime != null && nonblock) {
            throw new ParameterException(self, "--wait and --nonblock exclude each other: use one of them");
        }
        if ((permits != null ? 1 : 0) + (shared ? 1 : 0) + (exclusive ? 1 : 0) > 1) {
            throw new ParameterException(self, "--permits, --shared and --exclusive exclude each other: use one");
        }
        if (permits != null && permits < 1) {
            throw new ParameterException(self, "--permits must be at least 1, got " + permits);
        }
        command = GuardedCommand.checkNameAndCommand(self, name, command);
        GuardedCommand.checkLeaseTime(self, leaseTime);
        if (minHold != null && minHold.compareTo(DistributedLock.MAX_LEASE_TIME) > 0) {
            throw new ParameterException(self, "--min-hold must be at most 365 days, got " + minHold);
        }
    }

    /** How long {@code run} waits: zero for {@code --nonblock}, {@link #FOREVER} without {@code --wait}. */
    Duration effectiveWait() {
        return nonblock ? Duration.ZERO : waitTime == null ? FOREVER : waitTime;
    }

    @Override
    public int execute() {
        return GuardedCommand.withShutdownHook(
                this::onShutdown, () -> Main.guarded(env, this::runLocked), this::finish);
    }

    private int runLocked() throws InterruptedException {
        LockClient connected = backend.builder().leaseTime(leaseTime).build();
        synchronized (stateLock) {
            if (finished) {
                connected.close();
                return ExitCodes.INTERRUPTED;
            }
            client = connected;
        }
        Target lock = target(connected);
        Optional<Lease> acquired = nonblock ? lock.tryAcquire().get() : await(lock);
        if (acquired.isEmpty()) {
            if (nonblock) {
                env.err().println("dlock: '" + name + "' is busy" + holderSuffix());
            }
            return ExitCodes.BUSY;
        }
        Lease lease = acquired.get();
        int code = runChild(lease);
        try {
            Duration left = minHold == null ? Duration.ZERO : minHold.minus(lease.heldFor());
            if (left.isNegative()) {
                left = Duration.ZERO;
            }
            // The engine releases it when the time is up; staying alive until then keeps renewing it on
            // every store (a ZooKeeper or etcd hold ends with the client), and Ctrl-C meanwhile leaves
            // it to a store with a time to live for the rest of the time.
            lease.closeAfter(left);
            Thread.sleep(left.toMillis());
        } catch (LockBackendException e) {
            env.err()
                    .println("dlock: could not release '" + name + "' (" + e.getMessage()
                            + "); the store frees it when the lease runs out");
        }
        return code;
    }

    /** How {@code run} takes the lock, a permit, or one side of a read-write lock. */
    private record Target(Supplier<Optional<Lease>> tryAcquire, Function<Duration, CompletableFuture<Lease>> acquire) {}

    /** The kind of lock {@code run} takes, as {@link LockInfo#kind()} names it. */
    LockKind kind() {
        return permits != null ? LockKind.SEMAPHORE : shared || exclusive ? LockKind.READ_WRITE : LockKind.LOCK;
    }

    private Target target(LockClient connected) {
        if (permits != null) {
            DistributedSemaphore semaphore = connected.semaphore(name, permits);
            return new Target(semaphore::tryAcquire, semaphore::acquireAsync);
        }
        if (shared || exclusive) {
            DistributedReadWriteLock rw = connected.readWriteLock(name);
            DistributedLock side = shared ? rw.readLock() : rw.writeLock();
            return new Target(side::tryAcquire, side::acquireAsync);
        }
        DistributedLock lock = connected.lock(name);
        return new Target(lock::tryAcquire, lock::acquireAsync);
    }

    /** Waits for the lock, drawing the live status line on a terminal; empty when the wait timed out. */
    private Optional<Lease> await(Target lock) throws InterruptedException {
        CompletableFuture<Lease> future = lock.acquire().apply(effectiveWait());
        synchronized (stateLock) {
            pendingWait = future;
        }
        long started = System.nanoTime();
        StatusLine line = env.interactive() ? new StatusLine() : null;
        try {
            while (true) {
                try {
                    return Optional.of(future.get(line == null ? 1_000 : 250, TimeUnit.MILLISECONDS));
                } catch (TimeoutException e) {
                    if (line != null) {
                        line.draw(Duration.ofNanos(System.nanoTime() - started));
                    }
                }
            }
        } catch (ExecutionException e) {
            Throwable cause = e.getCause();
            if (cause instanceof LockTimeoutException) {
                if (line != null) {
                    line.clear();
                }
                env.err()
                        .println("dlock: timed out after " + Durations.format(waitTime) + " waiting for '" + name + "'"
                                + holderSuffix());
                return Optional.empty();
            }
            if (cause instanceof RuntimeException runtime) {
                throw runtime;
            }
            throw new IllegalStateException(cause);
        } catch (CancellationException e) {
            throw new InterruptedException("the wait was cancelled");
        } finally {
            if (line != null) {
                line.clear();
            }
        }
    }

    private int runChild(Lease lease) throws InterruptedException {
        Process started;
        synchronized (stateLock) {
            if (finished) {
                return ExitCodes.INTERRUPTED;
            }
            try {
                started = GuardedCommand.start(
                        command,
                        Map.of("DLOCK_NAME", name, "DLOCK_FENCING_TOKEN", Long.toString(lease.fencingToken())));
            } catch (IOException e) {
                return GuardedCommand.cannotStart(env, command, e);
            }
            child = started;
        }
        lease.whenLost().thenAccept(reason -> {
            lostReason = reason;
            env.err()
                    .println("dlock: lost the lock '" + name + "' (" + reason.getMessage() + "); stopping "
                            + command.get(0) + " (SIGTERM, SIGKILL after " + Durations.format(grace) + ")");
            GuardedCommand.stop(started, grace);
        });
        int code = started.waitFor();
        if (lostReason != null) {
            return ExitCodes.LEASE_LOST;
        }
        return code;
    }

    /** Ctrl-C or SIGTERM: stop CMD (waiting up to the grace period), stop waiting, release, disconnect. */
    private void onShutdown() {
        Process running;
        CompletableFuture<Lease> waiting;
        synchronized (stateLock) {
            if (finished) {
                return;
            }
            running = child;
            waiting = pendingWait;
        }
        if (waiting != null) {
            waiting.cancel(true);
        }
        GuardedCommand.stopAndWait(running, grace);
        finish();
    }

    /** Closes the client once: releases the lease if still held and stops the client's threads. */
    private void finish() {
        LockClient toClose;
        synchronized (stateLock) {
            if (finished) {
                return;
            }
            finished = true;
            toClose = client;
        }
        if (toClose == null) {
            return;
        }
        if (lostReason != null) {
            // The lease is gone, so closing releases nothing: it only waits, up to one operation timeout, for
            // answers to renewals on their way, which a store that hangs never sends. Exit without waiting.
            Thread closer = new Thread(() -> close(toClose), "dlock-close");
            closer.setDaemon(true);
            closer.start();
        } else {
            close(toClose);
        }
    }

    private void close(LockClient toClose) {
        try {
            toClose.close();
        } catch (RuntimeException e) {
            env.err().println("dlock: closing the client failed: " + e.getMessage());
        }
    }

    private String holderSuffix() {
        LockKind kind = kind();
        try {
            List<LockInfo.Holder> holders = client.describe(name).stream()
                    .filter(info -> info.kind() == kind)
                    .flatMap(info -> info.holders().stream())
                    .toList();
            if (holders.isEmpty()) {
                return "";
            }
            if (holders.size() == 1) {
                return ", held by " + Holders.brief(holders.get(0));
            }
            return ", held by " + holders.size() + " holders: "
                    + holders.stream().map(Holders::brief).collect(Collectors.joining(", "));
        } catch (RuntimeException e) {
            return "";
        }
    }

    /** The live line on a terminal: holder, token and time waited, refreshed from the store every second. */
    private final class StatusLine {
        private long nextDescribe;
        private String holder = "";

        void draw(Duration waited) {
            long now = System.nanoTime();
            if (now - nextDescribe >= 0) {
                holder = holderSuffix();
                nextDescribe = now + TimeUnit.SECONDS.toNanos(1);
            }
            env.err()
                    .print("\rdlock: waiting for '" + name + "'" + holder + ", waited " + Durations.format(waited)
                            + "\033[K");
            env.err().flush();
        }

        void clear() {
            env.err().print("\r\033[K");
            env.err().flush();
        }
    }
}
