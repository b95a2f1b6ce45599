package dev.dlock.chaos;

import java.nio.file.Path;
import java.util.LinkedHashMap;
import java.util.Map;

/**
 * The stores the suite knows, by command-line name, in the order they run. A new store joins with one
 * entry here and a {@link Store} implementation that starts its processes.
 */
final class Stores {
    /** Starts a store: the address to listen on, a directory for its files, the class path for JVMs. */
    interface Factory {
        Store start(String host, Path dir, String classpath);
    }

    static final Map<String, Factory> ALL = new LinkedHashMap<>();

    static {
        ALL.put("redis", (host, dir, cp) -> RedisStores.standalone(host, dir, false));
        ALL.put("redis-fsync", (host, dir, cp) -> RedisStores.standalone(host, dir, true));
        ALL.put("redis-sentinel", (host, dir, cp) -> RedisStores.sentinel(host, dir));
        ALL.put("redis-cluster", (host, dir, cp) -> RedisStores.cluster(host, dir));
        ALL.put("redlock", (host, dir, cp) -> RedisStores.redlock(host, dir));
        ALL.put("zookeeper", ZooKeeperEnsemble::start);
        ALL.put("etcd", (host, dir, cp) -> EtcdCluster.start(host));
        ALL.put("postgresql", (host, dir, cp) -> SqlStore.postgres(host, dir));
        ALL.put("mariadb", (host, dir, cp) -> SqlStore.mariadb(host, dir));
    }

    private Stores() {}
}
