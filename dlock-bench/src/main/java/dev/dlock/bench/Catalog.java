package dev.dlock.bench;

import java.util.List;

/**
 * Every system the bench knows, in the order they are interleaved: per backend, dlock first, then its
 * peers, then the raw floor.
 *
 * <p>dlock systems whose backend module is not on the class path report themselves unavailable (see
 * {@link DlockSystem#unavailableReason}); the run skips them and says so.
 */
final class Catalog {
    private Catalog() {}

    static List<LockSystem> all() {
        return List.of(
                new DlockSystem("redis", e -> "redis://" + e.redis()),
                new RedissonSystem(false),
                new RedissonSystem(true),
                new SpringRedisSystem(false),
                new SpringRedisSystem(true),
                new RawSystem("redis"),
                new DlockSystem("zookeeper", e -> "zookeeper://" + e.zookeeper()),
                new CuratorSystem(),
                new RawSystem("zookeeper"),
                new DlockSystem("postgresql", Endpoints::postgresJdbcUrl),
                new SpringJdbcSystem(),
                new RawSystem("postgresql"),
                new DlockSystem("mariadb", Endpoints::mariadbJdbcUrl),
                new RawSystem("mariadb"),
                new DlockSystem("mem", e -> "mem:dlock-bench"));
    }
}
