package dev.dlock.zookeeper;

import dev.dlock.LockClient;
import dev.dlock.tck.LockContractTest;
import dev.dlock.testsupport.TcpProxy;
import org.apache.curator.framework.CuratorFramework;
import org.junit.jupiter.api.AfterAll;
import org.junit.jupiter.api.BeforeAll;

/**
 * The whole contract against a standalone ZooKeeper server started in this JVM. Clients connect through
 * a {@link TcpProxy}, so "the store is down" cuts every connection without losing the server's data; a
 * "crashed" client also has its session closed on the server, as a dead process's session would expire.
 */
class ZooKeeperContractTest extends LockContractTest {
    /** Short enough that a store outage makes leases lost within the suite's bound. */
    static final int SESSION_TIMEOUT_MS = 4_000;

    private static ZooKeeperServers servers;
    private static TcpProxy proxy;

    @BeforeAll
    static void startServer() throws Exception {
        servers = ZooKeeperServers.standalone();
        int port = Integer.parseInt(
                servers.connectString().substring(servers.connectString().lastIndexOf(':') + 1));
        proxy = TcpProxy.start("127.0.0.1", port);
    }

    @AfterAll
    static void stopServer() throws Exception {
        proxy.close();
        servers.close();
    }

    @Override
    protected LockClient.Builder newClientBuilder() {
        return TestClients.builder("zookeeper://127.0.0.1:" + proxy.port() + "?sessionTimeout=" + SESSION_TIMEOUT_MS);
    }

    @Override
    protected void stopStore() {
        proxy.cut();
    }

    @Override
    protected void startStore() {
        proxy.restore();
    }

    @Override
    protected void simulateCrash(LockClient client) throws Exception {
        CuratorFramework curator = TestClients.curator(client); // before the crash: it asks the store once
        super.simulateCrash(client);
        servers.expireSession(curator);
    }

    /** The holds live in the client's session, which its close ends. */
    @Override
    protected boolean holdsOutliveTheirClient() {
        return false;
    }
}
