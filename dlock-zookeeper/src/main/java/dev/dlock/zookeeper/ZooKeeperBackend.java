package dev.dlock.zookeeper;

import dev.dlock.LockBackendException;
import dev.dlock.LockException;
import dev.dlock.LockInfo;
import dev.dlock.spi.AcquireRequest;
import dev.dlock.spi.AcquireResult;
import dev.dlock.spi.BackendContext;
import dev.dlock.spi.LockBackend;
import dev.dlock.spi.LockKey;
import dev.dlock.spi.Mode;
import dev.dlock.spi.OrderTokens;
import dev.dlock.spi.RenewRequest;
import dev.dlock.spi.WakeListener;
import java.util.List;
import java.util.Set;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.CompletionStage;
import java.util.concurrent.ScheduledThreadPoolExecutor;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.atomic.AtomicInteger;
import org.apache.curator.framework.CuratorFramework;
import org.apache.curator.framework.imps.CuratorFrameworkState;
import org.apache.zookeeper.ZooKeeper;

/**
 * The ZooKeeper backend: the SPI facade over the recipes, each in a class of its own.
 *
 * <ul>
 *   <li>{@link ExclusiveRecipe}: the exclusive lock (one EPHEMERAL node per name, with its guard).
 *   <li>{@link QueueRecipe}: fair, read-write and semaphore (EPHEMERAL_SEQUENTIAL entries, {@link
 *       QueueRules}).
 *   <li>{@link HeldNodes}: when a grant may be handed out, renewals, and the watch on each held node.
 *   <li>{@link OwnNodes}: every node this client made or may have made, and how it is removed.
 *   <li>{@link Wakeups}: subscriptions and the watches that wake waiters.
 *   <li>{@link SessionTracker} and {@link SessionRecovery}: the session, which is the lease, and what
 *       happens to the nodes when it changes.
 *   <li>{@link Inspection}: describe, list, forceRelease.
 * </ul>
 *
 * <p>Fencing token: {@link OrderTokens} of the node's czxid (times 16, with room for the engine's cohort
 * hand-off and for a downgraded read). A czxid is a zxid, so it increases across the ensemble, across
 * holders and across deletions and container reaping; the leader epoch is its high 32 bits, so scaling it
 * overflows only after 2^27 leader elections (and fails loudly then).
 *
 * <p>Leases: the lease is the ZooKeeper session. The backend keeps no lease clock: it hands the session
 * ({@link SessionTracker}, a {@link dev.dlock.spi.SessionLeases}) to the engine when it opens, and the
 * engine's watchdog decides every lease's deadline, marks leases lost when the session's certain life
 * ends, and releases a lease whose lease time passed without renewal (so a holder with renewal switched
 * off loses the lock after its lease time, as with every other backend).
 *
 * <p>Threads: requests are Curator background operations; their callbacks and all watches run on
 * ZooKeeper's event thread and never block. One timer thread per backend sends the session heartbeat
 * and bounds subscriptions.
 */
final class ZooKeeperBackend implements LockBackend {
    private static final AtomicInteger INSTANCES = new AtomicInteger();
    private final CuratorFramework client;
    private final boolean ownsClient;
    private final ScheduledThreadPoolExecutor timer;
    private final SessionTracker session;
    private final SessionRecovery recovery;
    private final OwnNodes nodes;
    private final HeldNodes held;
    private final Wakeups wakeups;
    private final ExclusiveRecipe exclusive;
    private final QueueRecipe queue;
    private final Inspection inspection;
    private volatile boolean closed;

    private ZooKeeperBackend(
            CuratorFramework client, boolean ownsClient, int sessionTimeoutMs, BackendContext context) {
        this.client = client;
        this.ownsClient = ownsClient;
        int id = INSTANCES.incrementAndGet();
        this.timer = new ScheduledThreadPoolExecutor(1, r -> {
            Thread t = new Thread(r, "dlock-zookeeper-session-" + id);
            t.setDaemon(true);
            return t;
        });
        timer.setRemoveOnCancelPolicy(true);
        Requests requests = new Requests(client);
        HolderNodes holders = new HolderNodes(client);
        this.wakeups = new Wakeups(
                client, timer, Math.max(1, context.operationTimeout().toMillis()));
        this.session = new SessionTracker(client, timer, sessionTimeoutMs);
        this.nodes = new OwnNodes(requests, holders, wakeups, session);
        this.recovery = new SessionRecovery(nodes, wakeups, context.events());
        this.held = new HeldNodes(requests, nodes, session);
        this.exclusive = new ExclusiveRecipe(requests, holders, nodes, held, wakeups, session);
        this.queue = new QueueRecipe(requests, nodes, held, wakeups, session);
        this.inspection = new Inspection(requests, holders);
    }

    /**
     * Opens a backend on a started client, waiting up to the operation timeout for a connection.
     *
     * @param client a started Curator client
     * @param ownsClient whether closing the backend closes the client
     * @param sessionTimeoutMs the session timeout asked for, used until one is negotiated; 0 to take the
     *     client's
     * @param context the engine's context
     */
    static ZooKeeperBackend open(
            CuratorFramework client, boolean ownsClient, int sessionTimeoutMs, BackendContext context) {
        if (client.getState() != CuratorFrameworkState.STARTED) {
            throw new IllegalArgumentException("the CuratorFramework must be started (state: " + client.getState()
                    + "); call start() before handing it to dlock");
        }
        boolean connected;
        try {
            connected = client.blockUntilConnected(
                    (int) Math.max(1, context.operationTimeout().toMillis()), TimeUnit.MILLISECONDS);
        } catch (InterruptedException e) {
            Thread.currentThread().interrupt();
            if (ownsClient) {
                client.close();
            }
            throw new LockException("interrupted while connecting to ZooKeeper", e);
        }
        if (!connected) {
            String where = client.getZookeeperClient().getCurrentConnectionString();
            if (ownsClient) {
                client.close();
            }
            throw new LockBackendException(
                    "could not connect to ZooKeeper at " + where + " within " + context.operationTimeout());
        }
        int requested = sessionTimeoutMs;
        if (requested <= 0) {
            ZooKeeper zk;
            try {
                zk = client.getZookeeperClient().getZooKeeper();
            } catch (Exception e) {
                throw new LockBackendException("could not reach the ZooKeeper client: " + e, e);
            }
            requested = zk.getSessionTimeout();
        }
        ZooKeeperBackend backend = new ZooKeeperBackend(client, ownsClient, requested, context);
        backend.session.start(backend.recovery);
        context.events().leasesAreSession(backend.session);
        return backend;
    }

    @Override
    public CompletionStage<AcquireResult> acquire(AcquireRequest request) {
        if (closed) {
            return CompletableFuture.failedFuture(new IllegalStateException("the ZooKeeper backend is closed"));
        }
        return request.key().mode() == Mode.EXCLUSIVE ? exclusive.acquire(request) : queue.acquire(request);
    }

    @Override
    public CompletionStage<Boolean> release(LockKey key, String owner) {
        return nodes.release(owner);
    }

    /** {@link OrderTokens#BLOCK}: tokens are {@link OrderTokens} of czxids. */
    @Override
    public long tokenBlock() {
        return OrderTokens.BLOCK;
    }

    @Override
    public CompletionStage<Void> cancelWait(LockKey key, String owner) {
        return nodes.release(owner).thenApply(ignored -> null);
    }

    /** Sends nothing: answered from the session and the held nodes' watches ({@link HeldNodes}). */
    @Override
    public CompletionStage<Set<String>> renew(List<RenewRequest> batch) {
        return CompletableFuture.completedFuture(held.renew(batch));
    }

    @Override
    public boolean leasesValid() {
        return !closed && session.leasesValid();
    }

    @Override
    public CompletionStage<Subscription> subscribe(LockKey key, WakeListener listener) {
        if (closed) {
            return CompletableFuture.failedFuture(new IllegalStateException("the ZooKeeper backend is closed"));
        }
        return wakeups.subscribe(key, listener);
    }

    @Override
    public CompletionStage<LockInfo> describe(LockKey key) {
        return inspection.describe(key);
    }

    @Override
    public CompletionStage<List<LockInfo>> list(String namespace, String prefix) {
        return inspection.list(namespace, prefix);
    }

    /** Removes every node of the resource; this client's holds of it are then lost, its waiters woken. */
    @Override
    public CompletionStage<Boolean> forceRelease(LockKey key) {
        String resource = NodeLayout.resourcePath(key);
        return inspection.forceRelease(key).thenApply(any -> {
            for (Node node : nodes.all()) {
                if (node.resource.equals(resource)) {
                    held.holdGone(node);
                }
            }
            wakeups.wake(resource, null);
            return any;
        });
    }

    @Override
    public void close() {
        if (closed) {
            return;
        }
        closed = true;
        recovery.close();
        session.stop();
        timer.shutdownNow();
        wakeups.close(!ownsClient);
        if (ownsClient) {
            client.close(); // ends the session: every ephemeral node of ours goes with it
            return;
        }
        // A shared client lives on: remove what is left of ours.
        for (Node node : nodes.all()) {
            nodes.release(node.owner);
        }
    }

    /** The Curator client this backend talks through (for tests of session faults). */
    CuratorFramework curator() {
        return client;
    }

    /** Acquisitions this client keeps state for (for tests: busy or abandoned attempts keep none). */
    int acquisitions() {
        return nodes.size();
    }

    /** Resources with a wake-up subscription (for tests). */
    Set<String> subscribedResources() {
        return wakeups.subscribedResources();
    }

    @Override
    public String toString() {
        return "ZooKeeperBackend[" + client.getZookeeperClient().getCurrentConnectionString()
                + (client.getNamespace() == null || client.getNamespace().isEmpty() ? "" : "/" + client.getNamespace())
                + "]";
    }
}
