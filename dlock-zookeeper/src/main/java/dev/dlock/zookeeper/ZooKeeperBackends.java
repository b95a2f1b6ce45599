package dev.dlock.zookeeper;

import dev.dlock.spi.LockBackendFactory;
import java.util.Objects;
import org.apache.curator.framework.CuratorFramework;

/**
 * Factories for ZooKeeper backends built from a Curator client the application already has ({@code
 * connectString} is for example {@code "zk1:2181,zk2:2181,zk3:2181"}). There are no options to set here:
 * the client carries them.
 *
 * <!-- example: zookeeper-curator (ZooKeeperBackendsExamplesTest; a test checks that both are the same) -->
 * <pre>{@code
 * CuratorFramework curator =
 *         CuratorFrameworkFactory.newClient(connectString, new ExponentialBackoffRetry(100, 3));
 * curator.start();
 * try (LockClient locks =
 *         LockClient.builder(ZooKeeperBackends.of(curator)).build()) {
 *     try (Lease lease = locks.lock("report").acquire(Duration.ofSeconds(5))) {
 *         // the lease lives as long as the ZooKeeper session: see Lease#isValid()
 *         writeReport(lease.fencingToken());
 *     }
 * }
 * }</pre>
 *
 * <p>The client keeps its own settings: namespace, ACL provider, authentication, retry policy, session
 * and connection timeouts. Closing the {@code LockClient} removes dlock's nodes and listeners but leaves
 * the Curator client open. For {@code zookeeper://} URIs, see {@link ZooKeeperBackendProvider}.
 */
public final class ZooKeeperBackends {
    private ZooKeeperBackends() {}

    /**
     * A backend factory over a started Curator client, which stays owned by the caller.
     *
     * @param client a started {@code CuratorFramework}; dlock's nodes go under its namespace
     * @return a factory for {@code LockClient.builder(LockBackendFactory)}
     * @throws NullPointerException if {@code client} is null
     */
    public static LockBackendFactory of(CuratorFramework client) {
        Objects.requireNonNull(client, "client must not be null");
        return context -> ZooKeeperBackend.open(client, false, 0, context);
    }
}
