/**
 * The Redis backend (standalone, Sentinel, Cluster, and Redlock over several masters), on Lettuce. Serves
 * the {@code redis}, {@code redis-sentinel}, {@code redis-cluster} and {@code redlock} URI schemes (and
 * their TLS and Valkey twins) through {@code LockClient.connect}; {@code RedisBackends} and
 * {@code RedlockBackends} take Lettuce clients, hence the transitive {@code lettuce.core}. Netty is read for
 * the futures Lettuce's shutdown returns.
 */
@SuppressWarnings("requires-transitive-automatic") // its types are in this module's API
module dev.dlock.redis {
    requires transitive dev.dlock.core;
    requires transitive lettuce.core;
    requires io.netty.common;

    exports dev.dlock.redis;

    provides dev.dlock.spi.LockBackendProvider with
            dev.dlock.redis.RedisBackendProvider;
}
