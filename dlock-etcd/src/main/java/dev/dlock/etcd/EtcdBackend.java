package dev.dlock.etcd;

import dev.dlock.LockBackendException;
import dev.dlock.LockInfo;
import dev.dlock.etcd.LeaseKeeper.EtcdLease;
import dev.dlock.spi.AcquireRequest;
import dev.dlock.spi.AcquireResult;
import dev.dlock.spi.BackendContext;
import dev.dlock.spi.LockBackend;
import dev.dlock.spi.LockKey;
import dev.dlock.spi.OrderTokens;
import dev.dlock.spi.RenewRequest;
import dev.dlock.spi.WakeListener;
import io.etcd.jetcd.ByteSequence;
import io.etcd.jetcd.Client;
import io.etcd.jetcd.KV;
import io.etcd.jetcd.options.GetOption;
import java.time.Duration;
import java.util.List;
import java.util.Set;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.CompletionStage;

/**
 * The etcd backend: every SPI primitive as jetcd KV, Watch and Lease requests. This class is the wiring;
 * each concern lives in one package-private class:
 *
 * <ul>
 *   <li>{@link Acquisitions}: the acquire and release recipe (one key per acquisition on the client's etcd
 *       lease, ordered by create revision; the fencing token is {@link dev.dlock.spi.OrderTokens} of the create
 *       revision, which leaves room for the engine's cohort hand-off and a downgraded read).
 *   <li>{@link Holds}: the acquisitions with a key, by owner id, and how they end.
 *   <li>{@link Deletes}: the keys of ended acquisitions until etcd confirms their delete.
 *   <li>{@link Waits}: the one watch of each waiter and the engine's wake-up listeners.
 *   <li>{@link LeaseKeeper}: the client's etcd lease, its keep-alive, and its health as the {@link
 *       dev.dlock.spi.SessionLeases} the engine's watchdog reads.
 *   <li>{@link Renewal}: one renewal tick (one keep-alive per etcd lease, one existence check per 100
 *       holds).
 *   <li>{@link EtcdAdmin}: {@code describe}, {@code list} and {@code forceRelease}.
 * </ul>
 *
 * <p>Leases, one clock: every key is on the client's etcd lease, which the server keeps while keep-alives
 * arrive, so the lease is a session. The backend hands the {@link LeaseKeeper} to the engine while it opens
 * ({@code BackendEvents.leasesAreSession}) and keeps no expiry or timer of its own: the engine's watchdog
 * bounds every hold by the etcd lease's certain life and, when a hold's own lease time passes without
 * renewal, releases it here (a delete of its key). A lease the server reports gone ends at once, and every
 * holder is told ({@code allLeasesLost}).
 *
 * <p>Failure modes: every request is bounded by the operation timeout ({@link Calls}), and so is opening.
 */
final class EtcdBackend implements LockBackend, LeaseKeeper.Listener {
    private final Client client;
    private final boolean ownsClient;
    private final String prefix;
    private final BackendContext.BackendEvents events;
    private final Calls calls;
    private final KV kv;
    private final LeaseKeeper keeper;
    private final Waits waits;
    private final Holds holds;
    private final Deletes deletes;
    private final Acquisitions acquisitions;
    private final EtcdAdmin admin;

    private volatile boolean closed;

    private EtcdBackend(Client client, boolean ownsClient, String prefix, BackendContext context) {
        this.client = client;
        this.ownsClient = ownsClient;
        this.prefix = prefix;
        this.events = context.events();
        this.calls = new Calls(context.operationTimeout());
        this.kv = client.getKVClient();
        this.keeper = new LeaseKeeper(client.getLeaseClient(), calls, this);
        this.waits = new Waits(client.getWatchClient());
        this.holds = new Holds(waits, prefix);
        this.deletes = new Deletes(kv, calls);
        this.acquisitions = new Acquisitions(kv, calls, keeper, waits, holds, deletes);
        this.admin = new EtcdAdmin(kv, client.getLeaseClient(), calls, prefix, holds.view());
    }

    /**
     * Opens a backend, checking within the operation timeout that the cluster answers reads and that no
     * member may revoke live leases after a stall ({@link StaleLeaderCheck}), and hands
     * the client's etcd lease to the engine as its session. The first open in a JVM also loads jetcd's
     * gRPC, Netty and Vert.x code before its request is sent; the request's wait is bounded all the same.
     */
    static EtcdBackend open(
            Client client, boolean ownsClient, String prefix, BackendContext context, boolean allowStaleLeaderRevoke) {
        Duration budget = context.operationTimeout();
        try {
            new Calls(budget)
                    .bounded(client.getKVClient()
                            .get(
                                    KeyLayout.bytes(prefix.isEmpty() ? "dlock" : prefix),
                                    GetOption.builder().withCountOnly(true).build()))
                    .join();
        } catch (RuntimeException e) {
            if (ownsClient) {
                client.close();
            }
            Throwable cause = Calls.unwrap(e);
            String why = cause instanceof LockBackendException ? cause.getMessage() : cause.toString();
            throw new LockBackendException("could not reach etcd within " + budget + ": " + why, cause);
        }
        try {
            StaleLeaderCheck.verify(client, budget, allowStaleLeaderRevoke);
        } catch (RuntimeException e) {
            if (ownsClient) {
                client.close();
            }
            throw e;
        }
        EtcdBackend backend = new EtcdBackend(client, ownsClient, prefix, context);
        context.events().leasesAreSession(backend.keeper);
        return backend;
    }

    @Override
    public CompletionStage<AcquireResult> acquire(AcquireRequest request) {
        if (closed) {
            return CompletableFuture.failedFuture(new IllegalStateException("the etcd backend is closed"));
        }
        return acquisitions.acquire(request);
    }

    @Override
    public CompletionStage<Boolean> release(LockKey key, String owner) {
        return acquisitions.release(owner);
    }

    @Override
    public CompletionStage<Void> cancelWait(LockKey key, String owner) {
        return acquisitions.release(owner).thenApply(ignored -> null);
    }

    /** Sends one keep-alive per etcd lease and checks the renewed keys still exist ({@link Renewal}). */
    @Override
    public CompletionStage<Set<String>> renew(List<RenewRequest> batch) {
        return new Renewal(holds, keeper, kv, calls, batch).run();
    }

    @Override
    public void leaseEnded(EtcdLease lease, String reason) {
        if (holds.leaseEnded(lease) && !closed) {
            events.allLeasesLost(reason);
        }
    }

    /** Deletes that were not confirmed go again with each keep-alive: their keys live only while it does. */
    @Override
    public void keepingAlive(EtcdLease lease) {
        deletes.retryOn(lease);
    }

    /** {@link OrderTokens#BLOCK}: tokens are {@link OrderTokens} of create revisions ({@link KeyLayout#token}). */
    @Override
    public long tokenBlock() {
        return OrderTokens.BLOCK;
    }

    @Override
    public boolean leasesValid() {
        return !closed && keeper.leasesValid();
    }

    @Override
    public CompletionStage<Subscription> subscribe(LockKey key, WakeListener listener) {
        ByteSequence dir = KeyLayout.resourceDir(prefix, key);
        waits.listeners(dir).add(listener);
        return CompletableFuture.completedFuture(() -> waits.remove(dir, listener));
    }

    @Override
    public CompletionStage<LockInfo> describe(LockKey key) {
        return admin.describe(key);
    }

    @Override
    public CompletionStage<List<LockInfo>> list(String namespace, String namePrefix) {
        return admin.list(namespace, namePrefix);
    }

    @Override
    public CompletionStage<Boolean> forceRelease(LockKey key) {
        return admin.forceRelease(key);
    }

    @Override
    public void close() {
        if (closed) {
            return;
        }
        closed = true;
        acquisitions.close();
        waits.close();
        keeper.revokeAll();
        if (ownsClient) {
            client.close();
        }
    }

    @Override
    public String toString() {
        return "EtcdBackend[prefix '" + prefix + "', " + holds.size() + " keys, " + deletes.size() + " to delete]";
    }
}
