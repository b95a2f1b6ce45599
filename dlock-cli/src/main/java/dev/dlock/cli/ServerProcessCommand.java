package dev.dlock.cli;

import java.nio.file.Path;
import java.util.concurrent.CountDownLatch;
import picocli.CommandLine.Command;
import picocli.CommandLine.Option;

/**
 * Hidden {@code dlock server-process --state-dir DIR}: the body of the detached local server JVM. Starts
 * ZooKeeper on a free loopback port, records pid and port in the state directory, and serves until
 * terminated; on SIGTERM it stops ZooKeeper and removes its record.
 */
@Command(name = "server-process", hidden = true, description = "Run the local ZooKeeper server in the foreground.")
final class ServerProcessCommand implements Plan {
    @Option(names = "--state-dir", required = true, paramLabel = "DIR")
    Path stateDir;

    private final Environment env;

    ServerProcessCommand(Environment env) {
        this.env = env;
    }

    @Override
    public int execute() {
        // Before the first logger exists: the server's log (server.log) keeps ZooKeeper's warnings.
        System.setProperty("org.slf4j.simpleLogger.log.org.apache.zookeeper", "warn");
        return Main.guarded(env, () -> {
            LocalServer server = LocalServer.in(stateDir);
            long pid = ProcessHandle.current().pid();
            EmbeddedZooKeeper zookeeper = EmbeddedZooKeeper.start(server.dataDir(), 0);
            CountDownLatch stopped = new CountDownLatch(1);
            Runtime.getRuntime()
                    .addShutdownHook(new Thread(
                            () -> {
                                server.forget(pid);
                                zookeeper.close();
                                stopped.countDown();
                            },
                            "dlock-server-stop"));
            server.record(new LocalServer.Info(pid, zookeeper.port()));
            env.out().println("dlock local server: ZooKeeper on " + zookeeper.uri() + ", pid " + pid);
            env.out().flush();
            stopped.await();
            return ExitCodes.OK;
        });
    }
}
