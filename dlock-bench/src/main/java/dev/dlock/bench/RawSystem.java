package dev.dlock.bench;

import com.zaxxer.hikari.HikariConfig;
import com.zaxxer.hikari.HikariDataSource;
import io.lettuce.core.RedisClient;
import io.lettuce.core.RedisURI;
import io.lettuce.core.ScriptOutputType;
import io.lettuce.core.api.StatefulRedisConnection;
import io.lettuce.core.api.sync.RedisCommands;
import java.sql.Connection;
import java.sql.PreparedStatement;
import java.sql.ResultSet;
import java.sql.SQLException;
import java.util.concurrent.CountDownLatch;
import java.util.concurrent.TimeUnit;
import org.apache.zookeeper.CreateMode;
import org.apache.zookeeper.KeeperException;
import org.apache.zookeeper.Watcher;
import org.apache.zookeeper.ZooDefs;
import org.apache.zookeeper.ZooKeeper;

/**
 * The physical floor of each store: no lock at all, just two plain round trips per cycle on the same
 * kind of connection the lock libraries use. {@code lock()} is the first round trip, {@code unlock()} the
 * second.
 *
 * <ul>
 *   <li>Redis: two {@code EVALSHA}s of a script that returns 1, on one Lettuce connection per client
 *       shared by its threads (as Lettuce-based clients multiplex).
 *   <li>ZooKeeper: two {@code setData} writes on a plain ZooKeeper handle per client.
 *   <li>PostgreSQL and MariaDB: two {@code SELECT 1} on connections from a HikariCP pool per client.
 * </ul>
 *
 * <p>A floor cannot exclude anyone, so it only takes part in the scenarios where every thread has its own
 * name.
 */
final class RawSystem implements LockSystem {
    private final String backend;

    RawSystem(String backend) {
        this.backend = backend;
    }

    @Override
    public String name() {
        return "raw";
    }

    @Override
    public String backend() {
        return backend;
    }

    @Override
    public boolean supports(Scenario scenario) {
        return scenario == Scenario.UNCONTENDED || scenario == Scenario.DISTINCT;
    }

    @Override
    public String unavailableReason(Endpoints endpoints) {
        return Probes.tcp(endpoints.of(backend));
    }

    @Override
    public Client open(Endpoints endpoints, int threads, boolean renewal) throws Exception {
        return switch (backend) {
            case "redis" -> redis(endpoints);
            case "zookeeper" -> zookeeper(endpoints);
            case "postgresql" -> jdbc(endpoints.postgresJdbcUrl(), threads);
            case "mariadb" -> jdbc(endpoints.mariadbJdbcUrl(), threads);
            default -> throw new IllegalArgumentException("no raw floor for " + backend);
        };
    }

    private static Client redis(Endpoints endpoints) {
        RedisClient client = RedisClient.create(
                RedisURI.create(endpoints.redis().host(), endpoints.redis().port()));
        StatefulRedisConnection<String, String> connection = client.connect();
        RedisCommands<String, String> commands = connection.sync();
        String sha = commands.scriptLoad("return 1");
        return new Client() {
            @Override
            public BenchLock lock(String name) {
                String[] keys = {"dlock-bench:raw:" + name};
                return new RoundTrips(() -> commands.evalsha(sha, ScriptOutputType.INTEGER, keys));
            }

            @Override
            public void close() {
                connection.close();
                client.shutdown(0, 5, TimeUnit.SECONDS);
            }
        };
    }

    private static Client zookeeper(Endpoints endpoints) throws Exception {
        CountDownLatch connected = new CountDownLatch(1);
        ZooKeeper zk = new ZooKeeper(endpoints.zookeeper().toString(), 30_000, event -> {
            if (event.getState() == Watcher.Event.KeeperState.SyncConnected) {
                connected.countDown();
            }
        });
        if (!connected.await(10, TimeUnit.SECONDS)) {
            zk.close();
            throw new IllegalStateException("no ZooKeeper session at " + endpoints.zookeeper());
        }
        createIfMissing(zk, "/dlock-bench-raw");
        byte[] one = {1};
        return new Client() {
            @Override
            public BenchLock lock(String name) throws Exception {
                String path = "/dlock-bench-raw/" + name;
                createIfMissing(zk, path);
                return new RoundTrips(() -> zk.setData(path, one, -1));
            }

            @Override
            public void close() throws InterruptedException {
                zk.close();
            }
        };
    }

    private static void createIfMissing(ZooKeeper zk, String path) throws Exception {
        try {
            zk.create(path, new byte[0], ZooDefs.Ids.OPEN_ACL_UNSAFE, CreateMode.PERSISTENT);
        } catch (KeeperException.NodeExistsException exists) {
            // Created by another client or an earlier run.
        }
    }

    private static Client jdbc(String url, int threads) {
        HikariConfig config = new HikariConfig();
        config.setJdbcUrl(url);
        config.setMaximumPoolSize(threads);
        config.setMinimumIdle(threads);
        config.setPoolName("bench-raw");
        HikariDataSource data = new HikariDataSource(config);
        return new Client() {
            @Override
            public BenchLock lock(String name) {
                return new RoundTrips(() -> {
                    try (Connection c = data.getConnection();
                            PreparedStatement s = c.prepareStatement("SELECT 1");
                            ResultSet r = s.executeQuery()) {
                        if (!r.next()) {
                            throw new SQLException("SELECT 1 returned no row");
                        }
                    }
                    return null;
                });
            }

            @Override
            public void close() {
                data.close();
            }
        };
    }

    /** One round trip for lock, one for unlock; never excludes. */
    private record RoundTrips(java.util.concurrent.Callable<?> trip) implements BenchLock {
        @Override
        public void lock() throws Exception {
            trip.call();
        }

        @Override
        public void unlock() throws Exception {
            trip.call();
        }

        @Override
        public boolean tryLock() throws Exception {
            trip.call();
            return true;
        }
    }
}
