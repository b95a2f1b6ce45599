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
    /**
     * dlock-jdbc options: create its tables when missing, and as many JDBC threads (and pooled connections)
     * as the bench client has threads, the same pool size the JDBC peers get.
     */
    private static final String DLOCK_JDBC = "&dlock.createTables=true&dlock.threads=";

    private Catalog() {}

    static List<LockSystem> all() {
        return List.of(
                new DlockSystem("redis", (e, threads) -> "redis://" + e.redis()),
                new RedissonSystem(false),
                new RedissonSystem(true),
                new SpringRedisSystem(false),
                new SpringRedisSystem(true),
                new RawSystem("redis"),
                new DlockSystem("zookeeper", (e, threads) -> "zookeeper://" + e.zookeeper()),
                new CuratorSystem(),
                new RawSystem("zookeeper"),
                new DlockSystem("postgresql", (e, threads) -> e.postgresJdbcUrl() + DLOCK_JDBC + threads),
                new SpringJdbcSystem(),
                new RawSystem("postgresql"),
                new DlockSystem("mariadb", (e, threads) -> e.mariadbJdbcUrl() + DLOCK_JDBC + threads),
                new RawSystem("mariadb"),
                new DlockSystem("etcd", (e, threads) -> "etcd://" + e.etcd()),
                new JetcdLockSystem(),
                new DlockSystem("mem", (e, threads) -> "mem:dlock-bench"),
                new DlockSystem(
                        "redlock",
                        (e, threads) -> "redlock://"
                                + String.join(
                                        ",",
                                        e.redlock().stream()
                                                .map(Object::toString)
                                                .toList())),
                new RedissonRedLockSystem(false),
                new RedissonRedLockSystem(true));
    }
}
