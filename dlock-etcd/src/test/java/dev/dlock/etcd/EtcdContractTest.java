package dev.dlock.etcd;

import dev.dlock.LockClient;
import dev.dlock.tck.LockContractTest;
import dev.dlock.testsupport.EtcdServers;
import dev.dlock.testsupport.TcpProxy;
import org.junit.jupiter.api.AfterAll;
import org.junit.jupiter.api.BeforeAll;

/**
 * The whole contract against one etcd process. Clients connect through a {@link TcpProxy}, so "the store
 * is down" cuts every connection without losing the server's data.
 */
class EtcdContractTest extends LockContractTest {
    private static EtcdServers servers;
    private static TcpProxy proxy;

    @BeforeAll
    static void startServer() throws Exception {
        servers = EtcdServers.single();
        JetcdWarmUp.once(servers.member(0).clientUrl());
        proxy = TcpProxy.start("127.0.0.1", servers.member(0).clientPort());
    }

    @AfterAll
    static void stopServer() {
        proxy.close();
        servers.close();
    }

    @Override
    protected LockClient.Builder newClientBuilder() {
        return LockClient.builder("etcd://127.0.0.1:" + proxy.port() + "/tck");
    }

    @Override
    protected void stopStore() {
        proxy.cut();
    }

    @Override
    protected void startStore() {
        proxy.restore();
    }

    /** The holds live in the client's session, which its close ends. */
    @Override
    protected boolean holdsOutliveTheirClient() {
        return false;
    }
}
