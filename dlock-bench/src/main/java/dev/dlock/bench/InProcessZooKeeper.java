package dev.dlock.bench;

import java.io.File;
import java.io.IOException;
import java.net.InetSocketAddress;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.Comparator;
import java.util.stream.Stream;
import org.apache.zookeeper.server.ServerCnxnFactory;
import org.apache.zookeeper.server.ZooKeeperServer;

/**
 * A standalone ZooKeeper server inside the bench JVM, on a free loopback port, with its data in a
 * temporary directory that {@link #close()} deletes.
 *
 * <p>Transaction-log fsync is off ({@code zookeeper.forceSync=no}): every ZooKeeper system in the bench
 * talks to this one server, so the comparison is unaffected, and the numbers measure the clients rather
 * than the disk of a shared build machine.
 *
 * <p>Failure modes: a server that cannot bind or start throws from {@link #start()}; nothing is left
 * running.
 */
final class InProcessZooKeeper implements AutoCloseable {
    private final Path dir;
    private final ZooKeeperServer server;
    private final ServerCnxnFactory connections;

    private InProcessZooKeeper(Path dir, ZooKeeperServer server, ServerCnxnFactory connections) {
        this.dir = dir;
        this.server = server;
        this.connections = connections;
    }

    static InProcessZooKeeper start() throws IOException, InterruptedException {
        System.setProperty("zookeeper.forceSync", "no");
        System.setProperty("zookeeper.admin.enableServer", "false");
        Path dir = Files.createTempDirectory("dlock-bench-zk");
        File data = dir.toFile();
        ZooKeeperServer server = new ZooKeeperServer(data, data, 2000);
        ServerCnxnFactory connections = ServerCnxnFactory.createFactory();
        try {
            connections.configure(new InetSocketAddress("127.0.0.1", 0), 1000);
            connections.startup(server);
        } catch (IOException | InterruptedException | RuntimeException | Error e) {
            connections.shutdown();
            server.shutdown();
            deleteTree(dir);
            throw e;
        }
        return new InProcessZooKeeper(dir, server, connections);
    }

    int port() {
        return connections.getLocalPort();
    }

    @Override
    public void close() {
        connections.shutdown();
        server.shutdown();
        deleteTree(dir);
    }

    private static void deleteTree(Path dir) {
        try (Stream<Path> paths = Files.walk(dir)) {
            paths.sorted(Comparator.reverseOrder()).forEach(p -> p.toFile().delete());
        } catch (IOException e) {
            // A temp directory left behind is harmless.
        }
    }
}
