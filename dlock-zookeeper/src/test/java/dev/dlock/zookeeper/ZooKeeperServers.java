package dev.dlock.zookeeper;

import dev.dlock.testsupport.FreePorts;
import java.io.IOException;
import java.util.ArrayList;
import java.util.List;
import java.util.Map;
import java.util.concurrent.CountDownLatch;
import java.util.concurrent.TimeUnit;
import org.apache.curator.framework.CuratorFramework;
import org.apache.curator.test.InstanceSpec;
import org.apache.curator.test.TestingCluster;
import org.apache.curator.test.TestingServer;
import org.apache.zookeeper.Watcher;
import org.apache.zookeeper.ZooKeeper;
import org.apache.zookeeper.util.ServiceUtils;

/**
 * ZooKeeper servers run in this JVM for tests, with ZooKeeper's own server classes (through curator-test):
 * a standalone server or an ensemble of several, on free ports, with data in temporary directories that
 * are deleted on close. Reusable by any module that needs a real ZooKeeper without installing one.
 *
 * <p>The servers tick every {@value #TICK_MS} ms and accept session timeouts from {@value
 * #MIN_SESSION_MS} ms to {@value #MAX_SESSION_MS} ms, so session expiry can be tested in seconds.
 *
 * <pre>{@code
 * try (ZooKeeperServers zk = ZooKeeperServers.standalone()) {
 *     LockClient client = LockClient.connect("zookeeper://" + zk.connectString());
 * }
 * }</pre>
 */
final class ZooKeeperServers implements AutoCloseable {
    static final int TICK_MS = 250;
    static final int MIN_SESSION_MS = 2 * TICK_MS;
    static final int MAX_SESSION_MS = 30_000;

    static {
        // A server restarted on a port taken meanwhile fails to bind (see port()); ZooKeeper's embedded
        // server then calls System.exit(2) by default, which ended the whole test JVM (seen once in a dry
        // run of EnsembleFaultTest). Logged only, it fails the test that restarted it instead.
        ServiceUtils.setSystemExitProcedure(ServiceUtils.LOG_ONLY);
    }

    private final TestingServer standalone;
    private final TestingCluster ensemble;

    private ZooKeeperServers(TestingServer standalone, TestingCluster ensemble) {
        this.standalone = standalone;
        this.ensemble = ensemble;
    }

    /**
     * A port for a server, from {@link FreePorts}: below the kernel's range for outgoing connections and
     * not handed out again while this JVM has others, so a member restarted on its old ports finds them free.
     */
    private static int port() {
        return FreePorts.next();
    }

    private static InstanceSpec spec(int serverId) {
        return new InstanceSpec(
                null,
                port(),
                port(),
                port(),
                true,
                serverId,
                TICK_MS,
                -1,
                Map.of(
                        "minSessionTimeout",
                        String.valueOf(MIN_SESSION_MS),
                        "maxSessionTimeout",
                        String.valueOf(MAX_SESSION_MS)),
                "127.0.0.1");
    }

    /** Starts one standalone server; returns when it accepts connections. */
    static ZooKeeperServers standalone() throws Exception {
        return new ZooKeeperServers(new TestingServer(spec(-1), true), null);
    }

    /** Starts an ensemble of {@code size} servers; returns when they are started. */
    static ZooKeeperServers ensemble(int size) throws Exception {
        List<InstanceSpec> specs = new ArrayList<>();
        for (int i = 1; i <= size; i++) {
            specs.add(spec(i));
        }
        TestingCluster cluster = new TestingCluster(specs);
        cluster.start();
        return new ZooKeeperServers(null, cluster);
    }

    /** {@code host:port[,host:port...]} of every server. */
    String connectString() {
        return standalone != null ? standalone.getConnectString() : ensemble.getConnectString();
    }

    /** The servers of an ensemble, in server id order. */
    List<InstanceSpec> members() {
        List<InstanceSpec> list = new ArrayList<>(ensemble.getInstances());
        list.sort((a, b) -> Integer.compare(a.getServerId(), b.getServerId()));
        return list;
    }

    /** The ensemble member a client is connected to. */
    InstanceSpec connectedMember(CuratorFramework client) throws Exception {
        return ensemble.findConnectionInstance(client.getZookeeperClient().getZooKeeper());
    }

    /** Kills one ensemble member (its clients lose their connection at once). */
    void kill(InstanceSpec member) throws Exception {
        ensemble.killServer(member);
    }

    /** Restarts a killed ensemble member with its data. */
    void restart(InstanceSpec member) throws Exception {
        ensemble.restartServer(member);
    }

    /** Stops a standalone server, keeping its data. */
    void stop() throws IOException {
        standalone.stop();
    }

    /** Restarts a stopped standalone server on the same port, with its data. */
    void restart() throws Exception {
        standalone.restart();
    }

    /**
     * Ends a client's session on the server side, as the server does when a session times out: another
     * connection attaches to the same session and closes it. The server deletes the session's ephemeral
     * nodes; the client learns of the expiry when it talks to the server next.
     */
    void expireSession(CuratorFramework client) throws Exception {
        ZooKeeper victim = client.getZookeeperClient().getZooKeeper();
        CountDownLatch connected = new CountDownLatch(1);
        Watcher watcher = event -> {
            if (event.getState() == Watcher.Event.KeeperState.SyncConnected) {
                connected.countDown();
            }
        };
        ZooKeeper intruder =
                new ZooKeeper(connectString(), 10_000, watcher, victim.getSessionId(), victim.getSessionPasswd());
        try {
            if (!connected.await(10, TimeUnit.SECONDS)) {
                throw new IllegalStateException(
                        "could not attach to session 0x" + Long.toHexString(victim.getSessionId()));
            }
        } finally {
            intruder.close();
        }
    }

    @Override
    public void close() throws IOException {
        if (standalone != null) {
            standalone.close();
        }
        if (ensemble != null) {
            ensemble.close();
        }
    }
}
