package dev.dlock.etcd;

import dev.dlock.spi.LockBackendFactory;
import io.etcd.jetcd.Client;
import java.util.Objects;

/**
 * Factories for etcd backends built from a jetcd client the application already has ({@code endpoint}
 * is for example {@code "http://etcd1:2379"}; several may be given). There are no options to set here:
 * the client carries them.
 *
 * <!-- example: etcd-client (EtcdBackendsExamplesTest; a test checks that both are the same) -->
 * <pre>{@code
 * Client etcd = Client.builder().endpoints(endpoint).build();
 * try (LockClient locks = LockClient.builder(EtcdBackends.of(etcd)).build()) {
 *     try (Lease lease = locks.lock("report").acquire(Duration.ofSeconds(5))) {
 *         // pass lease.fencingToken() (a scaled etcd revision) to the resource you protect
 *         writeReport(lease.fencingToken());
 *     }
 * }
 * etcd.close();
 * }</pre>
 *
 * <p>The client keeps its own settings (endpoints, TLS, authentication, and its key namespace, under which
 * dlock's keys then go). Closing the {@code LockClient} revokes dlock's etcd lease, which deletes its keys,
 * but leaves the jetcd client open. For {@code etcd://} URIs, see {@link EtcdBackendProvider}.
 */
public final class EtcdBackends {
    private EtcdBackends() {}

    /**
     * A backend factory over a jetcd client, which stays owned by the caller.
     *
     * @param client a jetcd {@code Client}
     * @return a factory for {@code LockClient.builder(LockBackendFactory)}
     * @throws NullPointerException if {@code client} is null
     */
    public static LockBackendFactory of(Client client) {
        Objects.requireNonNull(client, "client must not be null");
        return context -> EtcdBackend.open(client, false, "", context, false);
    }

    /**
     * A backend factory over a jetcd client, which stays owned by the caller, that accepts a cluster whose
     * members run an etcd before 3.4.31 or 3.5.13 (with a warning in the log) instead of refusing it. Such a
     * member, when it was the leader and stalled, may revoke leases the cluster still keeps alive on
     * resuming (etcd-io/etcd#15247): another client is then granted a lock whose holder has not been told.
     * For clusters that cannot be upgraded yet, with fencing tokens checked by the resource.
     *
     * @param client a jetcd {@code Client}
     * @return a factory for {@code LockClient.builder(LockBackendFactory)}
     * @throws NullPointerException if {@code client} is null
     */
    public static LockBackendFactory allowingStaleLeaderRevoke(Client client) {
        Objects.requireNonNull(client, "client must not be null");
        return context -> EtcdBackend.open(client, false, "", context, true);
    }
}
