package dev.dlock.etcd;

import dev.dlock.LockClient;
import dev.dlock.tck.LockContractTest;
import dev.dlock.testsupport.EtcdServers;
import dev.dlock.testsupport.TcpProxy;
import java.util.ArrayList;
import java.util.List;
import java.util.stream.Collectors;
import org.junit.jupiter.api.AfterAll;
import org.junit.jupiter.api.BeforeAll;

/**
 * The whole contract against a cluster of three etcd members, each behind its own {@link TcpProxy}; "the
 * store is down" cuts all three.
 */
class EtcdClusterContractTest extends LockContractTest {
    private static EtcdServers servers;
    private static final List<TcpProxy> proxies = new ArrayList<>();

    @BeforeAll
    static void startCluster() throws Exception {
        servers = EtcdServers.cluster();
        JetcdWarmUp.once(servers.member(0).clientUrl());
        for (EtcdServers.Member m : servers.members()) {
            proxies.add(TcpProxy.start("127.0.0.1", m.clientPort()));
        }
    }

    @AfterAll
    static void stopCluster() {
        proxies.forEach(TcpProxy::close);
        proxies.clear();
        servers.close();
    }

    @Override
    protected LockClient.Builder newClientBuilder() {
        // Debian 12's etcd 3.4.23 is refused as a cluster (StaleLeaderCheck): accepted here, where no member stalls.
        return LockClient.builder("etcd://"
                + proxies.stream().map(p -> "127.0.0.1:" + p.port()).collect(Collectors.joining(","))
                + "?allowStaleLeaderRevoke=true");
    }

    @Override
    protected void stopStore() {
        proxies.forEach(TcpProxy::cut);
    }

    @Override
    protected void startStore() {
        proxies.forEach(TcpProxy::restore);
    }

    /** The holds live in the client's session, which its close ends. */
    @Override
    protected boolean holdsOutliveTheirClient() {
        return false;
    }
}
