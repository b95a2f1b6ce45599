package dev.dlock.redis;

import dev.dlock.spi.LockBackendFactory;
import dev.dlock.spi.LockBackendProvider;

/**
 * Makes {@code LockClient.connect(uri)} work for Redis URIs. Registered with {@link
 * java.util.ServiceLoader}; applications use it through {@code LockClient}.
 *
 * <h2>URI syntax</h2>
 *
 * <ul>
 *   <li>Standalone: {@code redis://[[user:]password@]host[:port][/database][?options]}; {@code rediss://}
 *       for TLS. Port 6379 by default.
 *   <li>Sentinel: {@code redis-sentinel://[[user:]password@]host[:port][,host[:port]...][/database][?options]#master},
 *       where the hosts are the Sentinels (port 26379 by default) and {@code master} is the monitored master's
 *       name; {@code rediss-sentinel://} for TLS. This is Lettuce's Sentinel syntax; the password is the
 *       data nodes'.
 *   <li>Cluster: {@code redis-cluster://[[user:]password@]host[:port][,host[:port]...][?options]}; {@code
 *       rediss-cluster://} for TLS. The hosts are seeds; the rest of the Cluster is discovered.
 *   <li>Redlock: {@code redlock://[[user:]password@]host:port,host:port,host:port[/database][?options]};
 *       {@code redlocks://} for TLS. The hosts are independent masters (an odd number, at least 3), each
 *       with the same credentials; see {@link RedlockBackends}.
 *   <li>Valkey: {@code valkey://}, {@code valkeys://}, {@code valkey-sentinel://}, {@code
 *       valkeys-sentinel://}, {@code valkey-cluster://} and {@code valkeys-cluster://} are read as their
 *       {@code redis} twins (Valkey speaks the same protocol and runs the same scripts).
 * </ul>
 *
 * <p>Options of every form: {@code allowEviction=true} accepts a server whose {@code maxmemory-policy}
 * evicts (refused by default; see {@link RedisBackends.Builder#allowEviction}); {@code
 * unsafeGrantAfterRestart=true} opts out of the hold-back after a lost state, and {@code maxLease=30s}
 * (not for Cluster) declares the client's longest lease (see {@link RedisBackends.Builder#maxLease}).
 * Redlock's own: {@code
 * minUptime=30s} (see {@link RedlockBackends.Builder#minUptime}) and {@code masterTimeout=100ms} (see
 * {@link RedlockBackends.Builder#masterTimeout}).
 *
 * <p>Options of this backend: {@code waitReplicas=N&waitTimeout=50ms} (standalone and Sentinel) sets
 * replica acknowledgements, see {@link RedisBackends.Builder#replicaAcks}; on by default for Sentinel
 * ({@code waitReplicas=1}, {@code waitTimeout} half the operation timeout; {@code waitReplicas=0} turns them off). Every other query option is
 * Lettuce's (for example {@code verifyPeer=CA} or {@code clientName=billing}); the timeout is always the
 * lock client's operation timeout.
 */
public final class RedisBackendProvider implements LockBackendProvider {
    /** Creates the provider (called by {@link java.util.ServiceLoader}). */
    public RedisBackendProvider() {}

    @Override
    public boolean accepts(String uri) {
        String scheme = RedisUris.scheme(uri);
        return scheme != null && RedisUris.SCHEMES.contains(scheme);
    }

    @Override
    public LockBackendFactory factory(String uri) {
        String scheme = RedisUris.scheme(uri);
        return scheme != null && scheme.startsWith("redlock") ? RedlockBackends.of(uri) : RedisBackends.of(uri);
    }
}
