package dev.dlock.cli;

import java.io.IOException;
import java.io.InputStream;
import java.io.OutputStream;
import java.net.InetAddress;
import java.net.InetSocketAddress;
import java.net.Socket;
import java.nio.charset.StandardCharsets;
import java.nio.file.Files;
import java.nio.file.Path;
import org.apache.zookeeper.server.NIOServerCnxnFactory;
import org.apache.zookeeper.server.ZooKeeperServer;

/**
 * A standalone ZooKeeper server (ZooKeeper's own {@link ZooKeeperServer} behind an {@link
 * NIOServerCnxnFactory}) in this JVM, listening on loopback only. Used by the detached local server of {@code
 * dlock server} and in-process by {@code dlock demo}.
 *
 * <p>Settings: tick 500 ms, session timeouts allowed from 1 to 60 seconds, transaction log writes not forced
 * to disk (a lock service for one machine trades crash durability of its log for latency: after a crash the
 * locks are gone, which leases make safe anyway).
 *
 * <p>Concurrency: start and close from one thread. Failure modes: a port in use or an unwritable data
 * directory fails {@link #start} with an {@link IOException}.
 */
final class EmbeddedZooKeeper implements AutoCloseable {
    private static final int TICK_MILLIS = 500;

    private final ZooKeeperServer server;
    private final NIOServerCnxnFactory factory;

    private EmbeddedZooKeeper(ZooKeeperServer server, NIOServerCnxnFactory factory) {
        this.server = server;
        this.factory = factory;
    }

    /**
     * Starts a server keeping its data under {@code dataDir}, on {@code port} of 127.0.0.1 (0 picks a free
     * port).
     */
    static EmbeddedZooKeeper start(Path dataDir, int port) throws IOException {
        System.setProperty("zookeeper.admin.enableServer", "false");
        System.setProperty("zookeeper.forceSync", "no");
        System.setProperty("zookeeper.4lw.commands.whitelist", "srvr,ruok");
        System.setProperty("zookeeper.maxCnxns", "10000");
        Files.createDirectories(dataDir);
        ZooKeeperServer server = new ZooKeeperServer(
                dataDir.resolve("snapshots").toFile(), dataDir.resolve("log").toFile(), TICK_MILLIS);
        server.setMinSessionTimeout(1_000);
        server.setMaxSessionTimeout(60_000);
        NIOServerCnxnFactory factory = new NIOServerCnxnFactory();
        try {
            factory.configure(new InetSocketAddress(InetAddress.getLoopbackAddress(), port), 1_000);
            factory.startup(server);
        } catch (InterruptedException e) {
            Thread.currentThread().interrupt();
            factory.shutdown();
            throw new IOException("interrupted while starting ZooKeeper", e);
        } catch (IOException | RuntimeException | Error e) {
            factory.shutdown();
            throw e;
        }
        return new EmbeddedZooKeeper(server, factory);
    }

    /** The port clients connect to on 127.0.0.1. */
    int port() {
        return factory.getLocalPort();
    }

    /** The URI of this server for {@code LockClient.connect}. */
    String uri() {
        return "zookeeper://127.0.0.1:" + port();
    }

    /** Stops serving and closes the data files. */
    @Override
    public void close() {
        factory.shutdown();
        if (server.isRunning()) {
            server.shutdown();
        }
    }

    /**
     * Whether a ZooKeeper server answers on 127.0.0.1:{@code port}: sends the {@code srvr} command and looks
     * for ZooKeeper's reply, so that an unrelated program that took the port is not mistaken for one.
     */
    static boolean answers(int port) {
        try (Socket socket = new Socket()) {
            socket.connect(new InetSocketAddress(InetAddress.getLoopbackAddress(), port), 1_000);
            socket.setSoTimeout(2_000);
            OutputStream out = socket.getOutputStream();
            out.write("srvr".getBytes(StandardCharsets.US_ASCII));
            out.flush();
            InputStream in = socket.getInputStream();
            String reply = new String(in.readNBytes(64), StandardCharsets.US_ASCII);
            return reply.startsWith("Zookeeper version");
        } catch (IOException e) {
            return false;
        }
    }
}
