package dev.dlock.cli;

import dev.dlock.LockClient;
import java.net.BindException;
import java.net.InetAddress;
import java.net.InetSocketAddress;
import java.net.UnknownHostException;
import java.time.Duration;
import java.util.LinkedHashMap;
import java.util.Map;
import java.util.concurrent.CountDownLatch;
import java.util.concurrent.Executors;
import java.util.concurrent.ScheduledExecutorService;
import java.util.concurrent.TimeUnit;
import java.util.function.Predicate;
import picocli.CommandLine;
import picocli.CommandLine.Command;
import picocli.CommandLine.Mixin;
import picocli.CommandLine.Option;
import picocli.CommandLine.ParameterException;

/**
 * {@code dlock console [--port P] [--bind ADDR] [--allow-release] [--backend URI] [--namespace NS]}: a live
 * web page for one store (held locks, waiters, a timeline of the last minutes), served on 127.0.0.1 until
 * Ctrl-C. See {@link LockWatcher} for how the timeline is derived and {@link ConsoleServer} for the HTTP
 * side.
 *
 * <p>Concurrency: one poller thread asks the store every {@code --interval}; the main thread waits for the
 * JVM's shutdown, whose hook stops the server and the poller and closes the client. Failure modes: an
 * unknown backend or bad address exits 2, a port in use or an unreachable store 69, both with a message.
 * A store that fails while the console runs shows its error on the page; polling goes on.
 */
@Command(
        name = "console",
        sortOptions = false,
        description = {
            "Serve a live web page of one store's locks: holders, tokens, lease left, waiters, and a timeline",
            "of grants, releases, expiries, lost leases and force-releases. Read-only unless --allow-release."
        })
final class ConsoleCommand implements Plan, Main.Validated {
    @Option(
            names = "--port",
            paramLabel = "P",
            defaultValue = "7070",
            description = "TCP port (default: ${DEFAULT-VALUE}; 0 picks a free one).")
    int port;

    @Option(
            names = "--bind",
            paramLabel = "ADDR",
            defaultValue = "127.0.0.1",
            description = "Address to listen on (default: ${DEFAULT-VALUE}). Another address makes the page "
                    + "reachable from other machines, without any login: a warning is printed.")
    String bind;

    @Option(names = "--allow-release", description = "Add a force-release button (with a confirmation) to every lock.")
    boolean allowRelease;

    @Option(
            names = "--interval",
            paramLabel = "DURATION",
            defaultValue = "1s",
            description = "How often the store is asked (default: ${DEFAULT-VALUE}).")
    Duration interval;

    @Option(
            names = "--window",
            paramLabel = "DURATION",
            defaultValue = "10m",
            description = "How far back the timeline reaches (default: ${DEFAULT-VALUE}).")
    Duration window;

    @Mixin
    BackendOption backend;

    private final Environment env;

    ConsoleCommand(Environment env) {
        this.env = env;
    }

    @Override
    public void validate(CommandLine self) {
        if (port < 0 || port > 65_535) {
            throw new ParameterException(self, "--port must be 0 to 65535, got " + port);
        }
        if (interval.compareTo(Duration.ofMillis(100)) < 0 || interval.compareTo(Duration.ofMinutes(1)) > 0) {
            throw new ParameterException(self, "--interval must be 100ms to 1m, got " + Durations.format(interval));
        }
        if (window.compareTo(Duration.ofMinutes(1)) < 0 || window.compareTo(Duration.ofHours(24)) > 0) {
            throw new ParameterException(self, "--window must be 1m to 24h, got " + Durations.format(window));
        }
    }

    @Override
    public int execute() {
        return Main.guarded(env, this::serve);
    }

    private int serve() throws Exception {
        InetAddress address;
        try {
            address = InetAddress.getByName(bind);
        } catch (UnknownHostException e) {
            env.err().println("dlock: --bind: unknown address '" + bind + "'");
            return ExitCodes.USAGE;
        }
        String uri = backend.resolve();
        LockClient client = LockClient.builder(uri).namespace(backend.namespace).build();
        ScheduledExecutorService poller = Executors.newSingleThreadScheduledExecutor(runnable -> {
            Thread thread = new Thread(runnable, "dlock-console-poll");
            thread.setDaemon(true);
            return thread;
        });
        LockWatcher watcher = new LockWatcher(
                () -> client.list(""),
                client::heldBack,
                System::nanoTime,
                System::currentTimeMillis,
                window.toMillis());
        Map<String, Object> about = new LinkedHashMap<>();
        about.put("store", Secrets.mask(uri));
        about.put("namespace", backend.namespace);
        about.put("pollMillis", interval.toMillis());
        about.put("windowMillis", window.toMillis());
        Predicate<String> releaser = allowRelease ? client::forceRelease : null;
        ConsoleServer server;
        try {
            server = ConsoleServer.start(new InetSocketAddress(address, port), watcher, releaser, about);
        } catch (BindException e) {
            poller.shutdownNow();
            client.close();
            env.err()
                    .println("dlock: cannot listen on " + address.getHostAddress() + ":" + port + " (" + e.getMessage()
                            + "): the port is in use or not allowed; choose another with --port");
            return ExitCodes.UNAVAILABLE;
        }
        CountDownLatch stopped = new CountDownLatch(1);
        Thread hook = new Thread(
                () -> {
                    server.close();
                    poller.shutdownNow();
                    client.close();
                    stopped.countDown();
                },
                "dlock-console-shutdown");
        Runtime.getRuntime().addShutdownHook(hook);
        poller.scheduleWithFixedDelay(watcher::poll, 0, interval.toMillis(), TimeUnit.MILLISECONDS);
        if (!address.isLoopbackAddress()) {
            env.err()
                    .println("dlock: WARNING: the console listens on " + address.getHostAddress()
                            + ", reachable from other machines without any login: whoever reaches it sees lock"
                            + " names and holders" + (allowRelease ? " and can force-release locks" : ""));
        }
        String host = address.isAnyLocalAddress() ? "127.0.0.1" : ConsoleServer.urlHost(address);
        env.out()
                .println("dlock console: http://" + host + ":" + server.port() + "/  (store " + Secrets.mask(uri)
                        + ", namespace " + backend.namespace
                        + (allowRelease ? ", force-release allowed" : ", read-only")
                        + "; Ctrl-C to stop)");
        env.out().flush();
        stopped.await();
        return ExitCodes.OK;
    }
}
