package dev.dlock.bench;

import java.util.concurrent.ConcurrentHashMap;
import java.util.concurrent.TimeUnit;
import org.apache.curator.framework.CuratorFramework;
import org.apache.curator.framework.CuratorFrameworkFactory;
import org.apache.curator.framework.recipes.locks.InterProcessMutex;
import org.apache.curator.retry.ExponentialBackoffRetry;

/**
 * Curator's {@code InterProcessMutex} (the standard ZooKeeper lock recipe: an ephemeral sequential node,
 * then a watch on the predecessor), one {@code CuratorFramework} per bench client, default session
 * timeout. The threads of one client that use one name share one mutex object, as an application would.
 *
 * <p>"Renewal" here is the ZooKeeper session's heartbeat, whose cost does not depend on how many locks
 * are held.
 */
final class CuratorSystem implements LockSystem {
    static final String ROOT = "/dlock-bench-curator";

    @Override
    public String name() {
        return "curator";
    }

    @Override
    public String backend() {
        return "zookeeper";
    }

    @Override
    public String unavailableReason(Endpoints endpoints) {
        return Probes.tcp(endpoints.zookeeper());
    }

    static CuratorFramework connect(Endpoints endpoints) throws InterruptedException {
        CuratorFramework curator = CuratorFrameworkFactory.newClient(
                endpoints.zookeeper().toString(), new ExponentialBackoffRetry(100, 3));
        curator.start();
        if (!curator.blockUntilConnected(10, TimeUnit.SECONDS)) {
            curator.close();
            throw new IllegalStateException("Curator could not connect to ZooKeeper at " + endpoints.zookeeper());
        }
        return curator;
    }

    @Override
    public Client open(Endpoints endpoints, int threads, boolean renewal) throws InterruptedException {
        CuratorFramework curator = connect(endpoints);
        ConcurrentHashMap<String, InterProcessMutex> mutexes = new ConcurrentHashMap<>();
        return new Client() {
            @Override
            public BenchLock lock(String name) {
                InterProcessMutex mutex =
                        mutexes.computeIfAbsent(name, n -> new InterProcessMutex(curator, ROOT + "/" + n));
                return new BenchLock() {
                    @Override
                    public void lock() throws Exception {
                        mutex.acquire();
                    }

                    @Override
                    public void unlock() throws Exception {
                        mutex.release();
                    }

                    @Override
                    public boolean tryLock() throws Exception {
                        return mutex.acquire(0, TimeUnit.MILLISECONDS);
                    }
                };
            }

            @Override
            public void close() {
                curator.close();
            }
        };
    }
}
