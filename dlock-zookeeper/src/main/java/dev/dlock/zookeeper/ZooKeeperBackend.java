package dev.dlock.zookeeper;

import static dev.dlock.zookeeper.Background.code;
import static dev.dlock.zookeeper.Background.failure;

import dev.dlock.LockBackendException;
import dev.dlock.LockException;
import dev.dlock.LockInfo;
import dev.dlock.spi.AcquireRequest;
import dev.dlock.spi.AcquireResult;
import dev.dlock.spi.BackendContext;
import dev.dlock.spi.LockBackend;
import dev.dlock.spi.LockKey;
import dev.dlock.spi.Mode;
import dev.dlock.spi.RenewRequest;
import dev.dlock.spi.WakeListener;
import dev.dlock.zookeeper.NodeLayout.Data;
import dev.dlock.zookeeper.NodeLayout.Entry;
import java.util.ArrayList;
import java.util.Comparator;
import java.util.HashSet;
import java.util.List;
import java.util.Set;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.CompletionStage;
import java.util.concurrent.ConcurrentHashMap;
import java.util.concurrent.CopyOnWriteArrayList;
import java.util.concurrent.ScheduledThreadPoolExecutor;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.atomic.AtomicInteger;
import org.apache.curator.framework.CuratorFramework;
import org.apache.curator.framework.api.CuratorEvent;
import org.apache.curator.framework.imps.CuratorFrameworkState;
import org.apache.curator.utils.ZKPaths;
import org.apache.zookeeper.AddWatchMode;
import org.apache.zookeeper.CreateMode;
import org.apache.zookeeper.KeeperException;
import org.apache.zookeeper.WatchedEvent;
import org.apache.zookeeper.Watcher;
import org.apache.zookeeper.ZooKeeper;
import org.apache.zookeeper.data.Stat;

/**
 * The ZooKeeper backend: every SPI primitive as ZooKeeper requests made through a Curator client.
 *
 * <p>Recipes (see {@link NodeLayout} for the paths):
 *
 * <ul>
 *   <li>Exclusive: one EPHEMERAL node per name, created and deleted with its guard in one transaction
 *       ({@link HolderNodes}); a read pipelined behind the create gives the token and the hold's watch, or
 *       for a busy answer the holder (which also finds our own node after a create that Curator retried)
 *       and a wake-up watch, so an attempt is one round trip and a release one more.
 *   <li>Fair, read-write, semaphore: one EPHEMERAL_SEQUENTIAL entry per acquisition, created on its first
 *       attempt and kept while it waits, then {@code getChildren} to see its place ({@link QueueRules}). A
 *       waiter watches only the node it waits for (its predecessor, or the entry that blocks it) with a
 *       {@code getData} watch, which ZooKeeper does not register when the node is already gone. Semaphore
 *       waiters instead share one persistent recursive watch per client and resource, and count down the
 *       entries ahead of them locally, so a release makes only the waiter it admits ask the store. A
 *       non-waiting attempt that is not granted deletes its entry before answering.
 *   <li>Fencing token: the czxid of the node, a zxid, so it increases across the ensemble, across holders
 *       and across deletions and container reaping.
 * </ul>
 *
 * <p>Leases: the lease is the ZooKeeper session ({@link SessionTracker}). {@link #renew} sends nothing:
 * it answers from what this client knows, namely whether the node it created is still held in the
 * session the tracker accepted, while that session is live. Every hold gets a watch at its grant, so
 * that a node removed by someone else ({@code forceRelease}) is reported at the next renewal. A grant is
 * handed out only if made in the accepted, live session and answered within half its lease time (else it
 * is given back and the attempt answered busy). A hold whose lease time passes without renewal (the
 * engine stopped renewing it) is deleted by this client, so that a holder with renewal switched off loses
 * the lock after its lease time as with every other backend.
 *
 * <p>Concurrency: requests are Curator background operations; their callbacks and all watches run on
 * ZooKeeper's event thread and never block. Per-acquisition state ({@link Node}) is guarded by the node's
 * monitor, held only for field updates. A small timer thread runs lease expiry, the session heartbeat
 * and subscription timeouts.
 *
 * <p>Failure modes: a create may have succeeded when its answer is lost; the owner id in every node name
 * or node data finds it again, either on the next attempt or by a sweep once connected, so no orphan is
 * left in a live session. Nodes are matched with the session that created them ({@code ephemeralOwner}),
 * so nodes of an expired session are never taken for ours. The exclusive node has a fixed path, so it is
 * deleted only with its guard and only through the ZooKeeper handle of the session that created it. A
 * semaphore watch the server sets after its subscription gave up is removed again.
 */
final class ZooKeeperBackend implements LockBackend, SessionTracker.Callbacks {
    private static final AtomicInteger INSTANCES = new AtomicInteger();
    private static final int MAX_TRIES = 5;
    /** When a grant was refused because the session is in transition: ask again this soon. */
    private static final long REFUSED_RETRY_MS = 50;

    private final CuratorFramework client;
    private final boolean ownsClient;
    private final BackendContext.BackendEvents events;
    private final long operationTimeoutMs;
    private final ScheduledThreadPoolExecutor timer;
    private final SessionTracker session;
    private final HolderNodes holders;
    /** Every acquisition this client has a node (or a create in flight) for, by owner id. */
    private final ConcurrentHashMap<String, Node> nodes = new ConcurrentHashMap<>();
    /** Waiting entries by resource directory, for watch events. */
    private final ConcurrentHashMap<String, Set<Node>> waiters = new ConcurrentHashMap<>();
    /** Holds whose exists watch is armed, by path. */
    private final ConcurrentHashMap<String, Node> watchedHolds = new ConcurrentHashMap<>();
    /** Wake-up subscriptions by resource path. */
    private final ConcurrentHashMap<String, Interest> interests = new ConcurrentHashMap<>();
    /** Nodes that must go once the session that owns them is connected again. */
    private final Set<Node> stale = ConcurrentHashMap.newKeySet();
    /** Acquisitions whose create failed without a clear answer: their node may exist. */
    private final Set<Node> suspects = ConcurrentHashMap.newKeySet();

    private final Watcher nodeWatcher = this::nodeEvent;
    private final Watcher permitWatcher = this::permitEvent;
    private final Watcher holdWatcher = this::holdEvent;
    /** On an exclusive node: the hold's watch for its holder, the wake-up watch for waiters. */
    private final Watcher exclusiveWatcher = event -> {
        holdEvent(event);
        nodeEvent(event);
    };

    private volatile boolean closed;

    private ZooKeeperBackend(
            CuratorFramework client, boolean ownsClient, int sessionTimeoutMs, BackendContext context) {
        this.client = client;
        this.ownsClient = ownsClient;
        this.events = context.events();
        this.operationTimeoutMs = Math.max(1, context.operationTimeout().toMillis());
        int id = INSTANCES.incrementAndGet();
        this.timer = new ScheduledThreadPoolExecutor(1, r -> {
            Thread t = new Thread(r, "dlock-zookeeper-timer-" + id);
            t.setDaemon(true);
            return t;
        });
        timer.setRemoveOnCancelPolicy(true);
        this.session = new SessionTracker(client, timer, sessionTimeoutMs, this);
        this.holders = new HolderNodes(client);
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
        backend.session.start();
        return backend;
    }

    // ---- per-acquisition state

    /** One acquisition's node. Fields are guarded by the node's monitor. */
    static final class Node {
        enum State {
            NEW,
            WAITING,
            HELD,
            ENDED
        }

        final LockKey key;
        final String owner;
        final String resource;
        State state = State.NEW;
        boolean creating;
        boolean abandoned;
        String path;
        long czxid;
        long session;
        long sequence;
        int permits;
        long leaseMillis;
        /** When the engine's current attempt reached this backend: the earliest it may have been sent. */
        long attemptNanos;

        long expiresAtNanos;
        boolean timerArmed;
        boolean watched;
        String watching;
        Set<Long> ahead;

        Node(LockKey key, String owner, int permits) {
            this.key = key;
            this.owner = owner;
            this.resource = NodeLayout.resourcePath(key);
            this.permits = permits;
        }

        boolean exclusive() {
            return key.mode() == Mode.EXCLUSIVE;
        }

        @Override
        public String toString() {
            return "Node[" + owner + " " + key.mode() + " " + state + " " + path + "]";
        }
    }

    // ---- acquire

    @Override
    public CompletionStage<AcquireResult> acquire(AcquireRequest request) {
        if (closed) {
            return CompletableFuture.failedFuture(new IllegalStateException("the ZooKeeper backend is closed"));
        }
        return request.key().mode() == Mode.EXCLUSIVE ? acquireExclusive(request, 0) : acquireEntry(request);
    }

    private CompletableFuture<AcquireResult> acquireExclusive(AcquireRequest request, int tries) {
        LockKey key = request.key();
        long attempt = System.nanoTime();
        Node node = nodes.computeIfAbsent(request.owner(), owner -> new Node(key, owner, 1));
        String path = node.resource;
        synchronized (node) {
            node.creating = true;
            if (tries == 0) {
                node.attemptNanos = attempt;
            }
        }
        byte[] data = NodeLayout.data(request.owner(), 1, key.name());
        CompletableFuture<CuratorEvent> create = holders.create(path, request.owner(), data);
        // Sent right behind the transaction on the same connection, so the server answers it after the
        // transaction: a grant (token, hold's watch) or a busy answer (holder, wake-up watch) costs one
        // round trip. Should Curator have retried the transaction, the read is done again after it.
        CompletableFuture<CuratorEvent> read = getData(path, exclusiveWatcher);
        return create.thenCompose(event -> switch (code(event)) {
            case OK -> {
                synchronized (node) {
                    node.watched = true; // the read that confirms the grant arms the hold's watch
                    watchedHolds.put(path, node);
                }
                yield read.handle((answer, error) -> error == null && ours(answer, request) ? answer : null)
                        .thenCompose(answer -> answer != null
                                ? holder(node, request, tries, answer, true)
                                : checkHolder(node, request, tries, true));
            }
            case NODEEXISTS -> {
                synchronized (node) {
                    node.creating = false;
                }
                yield read.handle((answer, error) -> error == null ? answer : null)
                        .thenCompose(answer -> answer != null
                                ? holder(node, request, tries, answer, false)
                                : checkHolder(node, request, tries, false));
            }
            default -> {
                createFailed(node, event);
                throw failure(event);
            }
        });
    }

    /**
     * Reads the exclusive node again: ours (just created, or after a retried create) or another holder's.
     * Just after our create the read's data watch is the hold's watch (a deletion by someone else is
     * noticed from the grant on); for a waiting attempt that meets another holder it is the wake-up watch.
     */
    private CompletableFuture<AcquireResult> checkHolder(
            Node node, AcquireRequest request, int tries, boolean justCreated) {
        Watcher watcher = justCreated || request.waiting() ? exclusiveWatcher : null;
        return getData(node.resource, watcher).thenCompose(event -> holder(node, request, tries, event, justCreated));
    }

    /** Whether a read of the exclusive node shows the node this owner created in the current session. */
    private boolean ours(CuratorEvent read, AcquireRequest request) {
        if (code(read) != KeeperException.Code.OK) {
            return false;
        }
        Data data = Data.parse(read.getData());
        return data != null
                && data.owner().equals(request.owner())
                && read.getStat().getEphemeralOwner() == session.currentSession();
    }

    /** Decides from a read of the exclusive node: granted (our node), busy (another's), or try again. */
    private CompletableFuture<AcquireResult> holder(
            Node node, AcquireRequest request, int tries, CuratorEvent event, boolean justCreated) {
        String path = node.resource;
        switch (code(event)) {
            case OK -> {
                if (ours(event, request)) {
                    return created(node, path, event.getStat(), request);
                }
                Data data = Data.parse(event.getData());
                forget(node);
                return CompletableFuture.completedFuture(AcquireResult.busy(retryHint(data)));
            }
            case NONODE -> {
                synchronized (node) {
                    node.watched = false;
                }
                watchedHolds.remove(path, node);
                if (tries + 1 >= MAX_TRIES) {
                    forget(node);
                    return CompletableFuture.completedFuture(AcquireResult.busy(0));
                }
                // Released (or force-released) meanwhile: try again, without a guard of ours left over.
                return holders.deleteGuard(path, request.owner())
                        .thenCompose(ignored -> acquireExclusive(request, tries + 1));
            }
            default -> {
                if (justCreated) {
                    createFailed(node, event); // the node exists: find it again once connected
                } else {
                    forget(node);
                }
                throw failure(event);
            }
        }
    }

    /** A lease time left on a local holder tells the waiter when to try again at the latest. */
    private long retryHint(Data holder) {
        Node local = holder == null ? null : nodes.get(holder.owner());
        if (local == null) {
            return -1;
        }
        synchronized (local) {
            if (local.state != Node.State.HELD) {
                return 0;
            }
            return Math.max(0, TimeUnit.NANOSECONDS.toMillis(local.expiresAtNanos - System.nanoTime()));
        }
    }

    /** The exclusive node was created (or found) for this acquisition. */
    private CompletableFuture<AcquireResult> created(Node node, String path, Stat stat, AcquireRequest request) {
        long attempt;
        synchronized (node) {
            node.creating = false;
            node.path = path;
            node.czxid = stat.getCzxid();
            node.session = stat.getEphemeralOwner();
            attempt = node.attemptNanos;
        }
        boolean grantable = grantable(stat.getEphemeralOwner(), attempt, request.leaseMillis());
        synchronized (node) {
            if (!node.abandoned && grantable) {
                hold(node, request.leaseMillis());
                return CompletableFuture.completedFuture(AcquireResult.granted(node.czxid));
            }
            if (node.abandoned) {
                deleteQuietly(node);
                return CompletableFuture.completedFuture(AcquireResult.busy(-1));
            }
            node.state = Node.State.ENDED;
        }
        // Refused: give the node back before answering, so that the retry cannot take it for its own.
        nodes.remove(node.owner, node);
        return deleteNode(node).thenApply(deleted -> AcquireResult.busy(REFUSED_RETRY_MS));
    }

    /**
     * Whether a node made for an attempt that reached the backend at {@code attemptNanos} may be handed
     * out: its session is the accepted one and live, and the answer came within half the lease time (a
     * request Curator held back while reconnecting can be answered long after the engine sent it, and the
     * engine counts the lease from the send).
     */
    private boolean grantable(long nodeSession, long attemptNanos, long leaseMillis) {
        return session.mayGrant(nodeSession, attemptNanos)
                && System.nanoTime() - attemptNanos < TimeUnit.MILLISECONDS.toNanos(leaseMillis) / 2;
    }

    private CompletableFuture<AcquireResult> acquireEntry(AcquireRequest request) {
        long attempt = System.nanoTime();
        Node node = nodes.computeIfAbsent(request.owner(), owner -> new Node(request.key(), owner, request.permits()));
        synchronized (node) {
            if (node.state == Node.State.ENDED) {
                return CompletableFuture.completedFuture(AcquireResult.busy(-1));
            }
            node.permits = request.permits();
            node.attemptNanos = attempt;
        }
        return ensureEntry(node, request).thenCompose(ready -> evaluate(node, request, 0));
    }

    /** Creates the acquisition's sequential entry unless it has one. */
    private CompletableFuture<Void> ensureEntry(Node node, AcquireRequest request) {
        synchronized (node) {
            if (node.path != null) {
                return CompletableFuture.completedFuture(null);
            }
            node.creating = true;
        }
        byte[] data = NodeLayout.data(node.owner, request.permits(), node.key.name());
        long downgradeOf = downgradeOf(request);
        String prefix = downgradeOf < 0
                ? NodeLayout.entryPathPrefix(node.key, node.owner)
                : NodeLayout.downgradePathPrefix(node.key, node.owner, downgradeOf);
        return create(prefix, CreateMode.EPHEMERAL_SEQUENTIAL, data).thenApply(event -> {
            if (code(event) != KeeperException.Code.OK) {
                createFailed(node, event);
                throw failure(event);
            }
            Entry entry = Entry.parse(ZKPaths.getNodeFromPath(event.getName()));
            boolean abandoned;
            synchronized (node) {
                node.creating = false;
                node.path = event.getName();
                node.czxid = event.getStat().getCzxid();
                node.session = event.getStat().getEphemeralOwner();
                node.sequence = entry == null ? -1 : entry.sequence();
                abandoned = node.abandoned;
                if (!abandoned) {
                    node.state = Node.State.WAITING;
                }
            }
            if (abandoned) {
                deleteQuietly(node);
            }
            return null;
        });
    }

    /** For a read taken while this client holds the write entry it names, that entry's sequence; else -1. */
    private long downgradeOf(AcquireRequest request) {
        Node writer = request.downgradeFrom() == null ? null : nodes.get(request.downgradeFrom());
        if (writer == null || writer.key.mode() != Mode.WRITE) {
            return -1;
        }
        synchronized (writer) {
            return writer.state == Node.State.HELD ? writer.sequence : -1;
        }
    }

    /** Reads the queue and decides: granted, busy (keeping the entry and watching), or busy (dropping it). */
    private CompletableFuture<AcquireResult> evaluate(Node node, AcquireRequest request, int tries) {
        return getChildren(node.resource).thenCompose(event -> {
            KeeperException.Code rc = code(event);
            if (rc != KeeperException.Code.OK && rc != KeeperException.Code.NONODE) {
                throw failure(event);
            }
            List<Entry> entries = sortedEntries(rc == KeeperException.Code.OK ? event.getChildren() : List.of());
            String ours;
            long mySession;
            synchronized (node) {
                if (node.abandoned || node.path == null) {
                    return CompletableFuture.completedFuture(AcquireResult.busy(-1));
                }
                ours = ZKPaths.getNodeFromPath(node.path);
                mySession = node.session;
            }
            int index = -1;
            List<Entry> queue = new ArrayList<>(entries.size());
            for (Entry e : entries) {
                if (e.node().equals(ours)) {
                    index = queue.size();
                    queue.add(e);
                } else if (e.owner().equals(node.owner)) {
                    // A duplicate from a create that Curator retried after a connection loss.
                    deleteEntryQuietly(node.resource + "/" + e.node());
                } else {
                    queue.add(e);
                }
            }
            if (index < 0 || mySession != session.currentSession()) {
                return entryGone(node, request, tries);
            }
            return decide(node, request, queue, index, tries);
        });
    }

    /** Our entry is gone (force-released, or its session expired): queue again at the end. */
    private CompletableFuture<AcquireResult> entryGone(Node node, AcquireRequest request, int tries) {
        synchronized (node) {
            if (node.abandoned) {
                return CompletableFuture.completedFuture(AcquireResult.busy(-1));
            }
            removeWaiter(node);
            node.path = null;
            node.state = Node.State.NEW;
        }
        if (tries + 1 >= MAX_TRIES) {
            return CompletableFuture.completedFuture(AcquireResult.busy(0));
        }
        return ensureEntry(node, request).thenCompose(ready -> evaluate(node, request, tries + 1));
    }

    private CompletableFuture<AcquireResult> decide(
            Node node, AcquireRequest request, List<Entry> queue, int index, int tries) {
        Entry blocker = QueueRules.blocker(request, queue, index);
        boolean granted = request.key().mode() == Mode.PERMIT ? index < request.permits() : blocker == null;
        boolean refused = false;
        if (granted) {
            long nodeSession;
            long attempt;
            synchronized (node) {
                nodeSession = node.session;
                attempt = node.attemptNanos;
            }
            refused = !grantable(nodeSession, attempt, request.leaseMillis());
        }
        if (granted && !refused) {
            synchronized (node) {
                if (node.abandoned) {
                    return CompletableFuture.completedFuture(AcquireResult.busy(-1));
                }
                removeWaiter(node);
                hold(node, request.leaseMillis());
                return CompletableFuture.completedFuture(AcquireResult.granted(node.czxid));
            }
        }
        if (!granted && queue.get(index).downgrade()) {
            // The write entry it downgrades from is gone: it would wait behind writers that wait for it.
            synchronized (node) {
                node.state = Node.State.ENDED;
            }
            nodes.remove(node.owner, node);
            return deleteNode(node).thenApply(deleted -> {
                throw new LockBackendException("the write hold on '" + node.key.name()
                        + "' to downgrade from is gone; the read hold was not taken");
            });
        }
        if (!request.waiting()) {
            synchronized (node) {
                node.state = Node.State.ENDED;
            }
            nodes.remove(node.owner, node);
            return deleteNode(node).thenApply(deleted -> AcquireResult.busy(-1));
        }
        String watch;
        synchronized (node) {
            if (node.abandoned) {
                return CompletableFuture.completedFuture(AcquireResult.busy(-1));
            }
            node.state = Node.State.WAITING;
            if (refused) {
                node.ahead = null;
                node.watching = null; // first in line: only the session is in question, ask again soon
            } else if (request.key().mode() == Mode.PERMIT) {
                Set<Long> ahead = ConcurrentHashMap.newKeySet();
                for (int i = 0; i < index; i++) {
                    ahead.add(queue.get(i).sequence());
                }
                node.ahead = ahead;
                node.watching = null;
            } else {
                node.watching = node.resource + "/" + blocker.node();
            }
            watch = node.watching;
            addWaiter(node);
        }
        if (watch == null) {
            return CompletableFuture.completedFuture(AcquireResult.busy(refused ? REFUSED_RETRY_MS : -1));
        }
        return getData(watch, nodeWatcher).thenCompose(event -> switch (code(event)) {
            case OK -> CompletableFuture.completedFuture(AcquireResult.busy(-1));
            case NONODE ->
                tries + 1 < MAX_TRIES
                        ? evaluate(node, request, tries + 1)
                        : CompletableFuture.completedFuture(AcquireResult.busy(0));
            default -> throw failure(event);
        });
    }

    private static List<Entry> sortedEntries(List<String> children) {
        List<Entry> entries = new ArrayList<>(children.size());
        for (String child : children) {
            Entry e = Entry.parse(child);
            if (e != null) {
                entries.add(e);
            }
        }
        entries.sort(Comparator.comparingLong(Entry::sequence));
        return entries;
    }

    /**
     * Marks a node held, starts its lease clock and arms the watch that notices its deletion by someone
     * else (at the grant, so a force-release at any time is noticed). Called under the node's monitor.
     */
    private void hold(Node node, long leaseMillis) {
        node.state = Node.State.HELD;
        if (!node.watched) {
            node.watched = true;
            watchHold(node);
        }
        node.leaseMillis = leaseMillis;
        node.expiresAtNanos = System.nanoTime() + TimeUnit.MILLISECONDS.toNanos(leaseMillis);
        if (!node.timerArmed) {
            node.timerArmed = true;
            scheduleLeaseCheck(node, TimeUnit.MILLISECONDS.toNanos(leaseMillis));
        }
    }

    private void scheduleLeaseCheck(Node node, long delayNanos) {
        if (!closed) {
            timer.schedule(() -> leaseCheck(node), delayNanos, TimeUnit.NANOSECONDS);
        }
    }

    /** Deletes a hold whose lease time passed without renewal. */
    private void leaseCheck(Node node) {
        synchronized (node) {
            if (node.state != Node.State.HELD) {
                node.timerArmed = false;
                return;
            }
            long left = node.expiresAtNanos - System.nanoTime();
            if (left > 0) {
                scheduleLeaseCheck(node, left);
                return;
            }
            node.timerArmed = false;
            node.state = Node.State.ENDED;
        }
        nodes.remove(node.owner, node);
        watchedHolds.remove(node.path, node);
        deleteNode(node).exceptionally(error -> {
            stale.add(node);
            return false;
        });
    }

    /** A create failed without a clear answer: the node may exist, so look for it once connected. */
    private void createFailed(Node node, CuratorEvent event) {
        KeeperException.Code rc = code(event);
        synchronized (node) {
            node.creating = false;
        }
        forget(node);
        if (rc != KeeperException.Code.NOAUTH && rc != KeeperException.Code.NONODE) {
            suspects.add(node);
            sweepSuspects();
        }
    }

    /** Drops an acquisition that has no node. */
    private void forget(Node node) {
        synchronized (node) {
            if (node.state == Node.State.HELD || node.creating) {
                return;
            }
            node.state = Node.State.ENDED;
            node.watched = false;
            removeWaiter(node);
        }
        nodes.remove(node.owner, node);
        watchedHolds.remove(node.resource, node);
    }

    // ---- release, cancel, renew

    @Override
    public CompletionStage<Boolean> release(LockKey key, String owner) {
        Node node = nodes.get(owner);
        if (node == null) {
            return CompletableFuture.completedFuture(false);
        }
        boolean held;
        String path;
        synchronized (node) {
            held = node.state == Node.State.HELD;
            node.abandoned = true;
            node.state = Node.State.ENDED;
            path = node.path;
            removeWaiter(node);
        }
        nodes.remove(owner, node);
        if (path == null) {
            return CompletableFuture.completedFuture(false); // a create in flight deletes its node on arrival
        }
        watchedHolds.remove(path, node);
        return deleteNode(node)
                .whenComplete((deleted, error) -> {
                    if (error != null) {
                        // Not deleted (the connection was lost at that moment): the node would outlive the
                        // release for as long as the session lives. The engine retries the release, which
                        // finds the node again; a reconnection in the same session deletes it too.
                        nodes.putIfAbsent(owner, node);
                        stale.add(node);
                    }
                })
                .thenApply(deleted -> deleted && held);
    }

    @Override
    public CompletionStage<Void> cancelWait(LockKey key, String owner) {
        return release(key, owner).thenApply(ignored -> null);
    }

    @Override
    public CompletionStage<Set<String>> renew(List<RenewRequest> batch) {
        boolean valid = session.leasesValid();
        long current = session.currentSession();
        long now = System.nanoTime();
        Set<String> lost = new HashSet<>();
        List<Node> toWatch = new ArrayList<>();
        List<Node> givenUp = new ArrayList<>();
        for (RenewRequest request : batch) {
            Node node = nodes.get(request.owner());
            boolean held = false;
            if (node != null) {
                synchronized (node) {
                    if (node.state == Node.State.HELD && node.session == current && valid) {
                        held = true;
                        node.leaseMillis = request.leaseMillis();
                        node.expiresAtNanos = now + TimeUnit.MILLISECONDS.toNanos(request.leaseMillis());
                        if (!node.watched) {
                            node.watched = true;
                            toWatch.add(node);
                        }
                    } else if (node.state == Node.State.HELD) {
                        node.state = Node.State.ENDED; // reported lost below, so the engine never releases it
                        givenUp.add(node);
                    }
                }
            }
            if (!held) {
                lost.add(request.owner());
            }
        }
        for (Node node : toWatch) {
            watchHold(node);
        }
        for (Node node : givenUp) {
            nodes.remove(node.owner, node);
            watchedHolds.remove(node.path, node);
            deleteQuietly(node); // harmless for a node of a dead session; else retried on reconnect
        }
        return CompletableFuture.completedFuture(lost);
    }

    /** Arms an exists watch on a long-lived hold, so that its deletion by someone else is noticed. */
    private void watchHold(Node node) {
        watchedHolds.put(node.path, node);
        Background.run(cb -> client.checkExists()
                        .usingWatcher(holdWatcher)
                        .inBackground(cb)
                        .forPath(node.path))
                .thenAccept(event -> {
                    if (code(event) == KeeperException.Code.NONODE
                            || (code(event) == KeeperException.Code.OK
                                    && event.getStat().getCzxid() != node.czxid)) {
                        holdGone(node);
                    } else if (code(event) != KeeperException.Code.OK) {
                        synchronized (node) {
                            node.watched = false; // try again at the next renewal
                        }
                    }
                });
    }

    private void holdEvent(WatchedEvent event) {
        if (event.getType() != Watcher.Event.EventType.NodeDeleted) {
            return;
        }
        Node node = watchedHolds.get(event.getPath());
        if (node == null) {
            return;
        }
        synchronized (node) {
            if (node.state != Node.State.HELD) {
                return; // our own release
            }
        }
        // An exclusive path is reused by the next holder: confirm that it is our node that went.
        Background.run(cb -> client.checkExists().inBackground(cb).forPath(node.path))
                .thenAccept(check -> {
                    if (code(check) == KeeperException.Code.NONODE
                            || (code(check) == KeeperException.Code.OK
                                    && check.getStat().getCzxid() != node.czxid)) {
                        holdGone(node);
                    }
                });
    }

    /** Someone else removed our held node: the next renewal reports it lost. */
    private void holdGone(Node node) {
        synchronized (node) {
            if (node.state != Node.State.HELD) {
                return;
            }
            node.state = Node.State.ENDED;
        }
        nodes.remove(node.owner, node);
        watchedHolds.remove(node.path, node);
    }

    @Override
    public boolean leasesValid() {
        return !closed && session.leasesValid();
    }

    // ---- wake-ups

    /**
     * The listeners of one resource, and for semaphores the persistent watch they share. {@code watchSet}
     * (guarded by {@link #interests}) turns true when the server confirmed the watch of {@code watch}.
     */
    private static final class Interest {
        final List<WakeListener> listeners = new CopyOnWriteArrayList<>();
        CompletableFuture<Void> watch;
        boolean watchSet;
    }

    @Override
    public CompletionStage<Subscription> subscribe(LockKey key, WakeListener listener) {
        if (closed) {
            return CompletableFuture.failedFuture(new IllegalStateException("the ZooKeeper backend is closed"));
        }
        String resource = NodeLayout.resourcePath(key);
        boolean semaphore = key.mode() == Mode.PERMIT;
        CompletableFuture<Void> live;
        synchronized (interests) {
            Interest interest = interests.computeIfAbsent(resource, r -> new Interest());
            interest.listeners.add(listener);
            if (semaphore && interest.watch == null) {
                interest.watch = addPermitWatch(resource);
            }
            live = semaphore ? interest.watch : CompletableFuture.completedFuture(null);
        }
        Subscription subscription = () -> unsubscribe(resource, listener);
        if (live.isDone() && !live.isCompletedExceptionally()) {
            return CompletableFuture.completedFuture(subscription);
        }
        // Bounded by the operation timeout: a subscription nobody waits for any more is cancelled here,
        // and a watch the server sets after that is removed again (addPermitWatch).
        CompletableFuture<Subscription> result = new CompletableFuture<>();
        live.whenComplete((ok, error) -> {
            if (error != null) {
                subscription.cancel();
                result.completeExceptionally(
                        error instanceof RuntimeException e ? e : new LockBackendException(error.toString(), error));
            } else if (!result.complete(subscription)) {
                subscription.cancel();
            }
        });
        timer.schedule(
                () -> {
                    if (result.completeExceptionally(new LockBackendException("ZooKeeper: the watch on '" + key.name()
                            + "' was not set within " + operationTimeoutMs + " ms"))) {
                        subscription.cancel();
                    }
                },
                operationTimeoutMs,
                TimeUnit.MILLISECONDS);
        return result;
    }

    /** Adds a semaphore's persistent watch; if nobody wants it any more when the server set it, removes it. */
    private CompletableFuture<Void> addPermitWatch(String resource) {
        CompletableFuture<Void> watch = new CompletableFuture<>();
        Background.run(cb -> client.watchers()
                        .add()
                        .withMode(AddWatchMode.PERSISTENT_RECURSIVE)
                        .inBackground(cb)
                        .usingWatcher(permitWatcher)
                        .forPath(resource))
                .whenComplete((event, error) -> {
                    Throwable failed =
                            error != null ? error : code(event) != KeeperException.Code.OK ? failure(event) : null;
                    boolean unwanted;
                    synchronized (interests) {
                        Interest interest = interests.get(resource);
                        boolean wanted = !closed && interest != null && interest.watch == watch;
                        if (wanted && failed == null) {
                            interest.watchSet = true;
                        }
                        // One registration per path and watcher: a newer interest's watch is the same one.
                        unwanted = failed == null && !wanted && (interest == null || interest.watch == null);
                    }
                    if (unwanted) {
                        removePermitWatch(resource);
                    }
                    if (failed != null) {
                        watch.completeExceptionally(failed);
                    } else {
                        watch.complete(null);
                    }
                });
        return watch;
    }

    private void removePermitWatch(String resource) {
        Background.run(cb -> client.watchers()
                .remove(permitWatcher)
                .ofType(Watcher.WatcherType.Any)
                .inBackground(cb)
                .forPath(resource));
    }

    private void unsubscribe(String resource, WakeListener listener) {
        boolean removeWatch;
        synchronized (interests) {
            Interest interest = interests.get(resource);
            if (interest == null || !interest.listeners.remove(listener) || !interest.listeners.isEmpty()) {
                return;
            }
            interests.remove(resource);
            removeWatch = interest.watchSet; // else a watch still on its way is removed when it is set
        }
        if (removeWatch && !closed) {
            removePermitWatch(resource);
        }
    }

    /** One-shot data watches: on an exclusive node, or on the entry a waiter waits for. */
    private void nodeEvent(WatchedEvent event) {
        if (event.getType() == Watcher.Event.EventType.None || event.getPath() == null) {
            return;
        }
        String path = event.getPath();
        if (interests.containsKey(path)) {
            wake(path, null); // an exclusive lock's node
        }
        String dir = ZKPaths.getPathAndNode(path).getPath();
        Set<Node> waiting = waiters.get(dir);
        if (waiting != null) {
            for (Node node : waiting) {
                if (path.equals(node.watching)) {
                    wake(dir, node.owner);
                }
            }
        }
    }

    /** The persistent recursive watch of a semaphore: count down the entries ahead of each local waiter. */
    private void permitEvent(WatchedEvent event) {
        if (event.getType() != Watcher.Event.EventType.NodeDeleted || event.getPath() == null) {
            return;
        }
        ZKPaths.PathAndNode parts = ZKPaths.getPathAndNode(event.getPath());
        Entry gone = Entry.parse(parts.getNode());
        Set<Node> waiting = waiters.get(parts.getPath());
        if (gone == null || waiting == null) {
            return;
        }
        for (Node node : waiting) {
            boolean admit;
            synchronized (node) {
                admit = node.ahead != null && node.ahead.remove(gone.sequence()) && node.ahead.size() < node.permits;
            }
            if (admit) {
                wake(parts.getPath(), node.owner);
            }
        }
    }

    private void wake(String resource, String owner) {
        Interest interest = interests.get(resource);
        if (interest != null) {
            for (WakeListener listener : interest.listeners) {
                listener.wake(owner);
            }
        }
    }

    private void addWaiter(Node node) {
        waiters.computeIfAbsent(node.resource, r -> ConcurrentHashMap.newKeySet())
                .add(node);
    }

    private void removeWaiter(Node node) {
        waiters.computeIfPresent(node.resource, (r, set) -> {
            set.remove(node);
            return set.isEmpty() ? null : set;
        });
    }

    // ---- session events

    @Override
    public void sessionLost(String reason, long deadSession) {
        List<Node> orphans = new ArrayList<>();
        for (Node node : nodes.values()) {
            boolean drop = false;
            synchronized (node) {
                if (node.state == Node.State.HELD) {
                    node.state = Node.State.ENDED;
                    drop = true;
                    if (node.session != deadSession) {
                        orphans.add(node); // held in a newer session, but its lease is declared lost below
                    }
                } else if (node.state == Node.State.WAITING && node.session == deadSession) {
                    removeWaiter(node);
                    node.path = null; // the next attempt queues again
                    node.state = Node.State.NEW;
                }
            }
            if (drop) {
                nodes.remove(node.owner, node);
                watchedHolds.remove(node.path, node);
            }
        }
        stale.removeIf(node -> node.session == deadSession);
        for (Node node : orphans) {
            deleteNode(node).exceptionally(error -> {
                stale.add(node);
                return false;
            });
        }
        events.allLeasesLost(reason);
    }

    @Override
    public void leasesInDoubt(String reason) {
        for (Node node : nodes.values()) {
            boolean drop = false;
            synchronized (node) {
                if (node.state == Node.State.HELD) {
                    node.state = Node.State.ENDED;
                    drop = true;
                }
            }
            if (drop) {
                nodes.remove(node.owner, node);
                watchedHolds.remove(node.path, node);
                stale.add(node);
            }
        }
        events.allLeasesLost(reason);
    }

    @Override
    public void reconnected(long currentSession, boolean sameSession) {
        if (closed) {
            return;
        }
        for (Node node : stale) {
            stale.remove(node);
            if (node.session == currentSession) {
                deleteNode(node).exceptionally(error -> {
                    stale.add(node);
                    return false;
                });
            }
        }
        if (!sameSession) {
            synchronized (interests) {
                for (var e : interests.entrySet()) {
                    if (e.getValue().watch != null) {
                        e.getValue().watchSet = false;
                        e.getValue().watch = addPermitWatch(e.getKey());
                    }
                }
            }
        }
        sweepSuspects();
        for (String resource : interests.keySet()) {
            wake(resource, null); // a watch may have been lost with the old session
        }
    }

    /** Deletes nodes that creates with a lost answer may have left, once they can be found. */
    private void sweepSuspects() {
        long current = session.currentSession();
        for (Node node : suspects) {
            suspects.remove(node);
            CompletableFuture<?> sweep = node.exclusive() ? sweepHolder(node, current) : sweepEntries(node, current);
            sweep.exceptionally(error -> {
                suspects.add(node);
                return null;
            });
        }
    }

    private CompletableFuture<?> sweepHolder(Node node, long current) {
        return getData(node.resource, null).thenCompose(event -> {
            if (code(event) == KeeperException.Code.NONODE) {
                return CompletableFuture.completedFuture(false);
            }
            if (code(event) != KeeperException.Code.OK) {
                throw failure(event);
            }
            Data data = Data.parse(event.getData());
            if (data == null
                    || !data.owner().equals(node.owner)
                    || event.getStat().getEphemeralOwner() != current) {
                return CompletableFuture.completedFuture(false);
            }
            synchronized (node) {
                node.path = node.resource;
                node.czxid = event.getStat().getCzxid();
                node.session = current;
            }
            return deleteNode(node);
        });
    }

    private CompletableFuture<?> sweepEntries(Node node, long current) {
        return getChildren(node.resource).thenAccept(event -> {
            if (code(event) == KeeperException.Code.NONODE) {
                return;
            }
            if (code(event) != KeeperException.Code.OK) {
                throw failure(event);
            }
            for (Entry e : sortedEntries(event.getChildren())) {
                if (e.owner().equals(node.owner)) {
                    deleteEntryQuietly(node.resource + "/" + e.node());
                }
            }
        });
    }

    // ---- deleting

    /** Deletes an acquisition's node; true if it existed. */
    private CompletableFuture<Boolean> deleteNode(Node node) {
        String path;
        long owner;
        synchronized (node) {
            path = node.path;
            owner = node.session;
        }
        if (path == null) {
            return CompletableFuture.completedFuture(false);
        }
        return node.exclusive() ? holders.delete(path, node.owner, owner) : deleteEntry(path);
    }

    private void deleteQuietly(Node node) {
        deleteNode(node).exceptionally(error -> {
            stale.add(node);
            return false;
        });
    }

    /**
     * A sequential entry has a unique path, never reused, so Curator's guaranteed delete (retried after
     * reconnecting, even in a new session) is safe.
     */
    private CompletableFuture<Boolean> deleteEntry(String path) {
        return Background.run(
                        cb -> client.delete().guaranteed().inBackground(cb).forPath(path))
                .thenApply(event -> switch (code(event)) {
                    case OK -> true;
                    case NONODE -> false;
                    default -> throw failure(event);
                });
    }

    private void deleteEntryQuietly(String path) {
        deleteEntry(path).exceptionally(error -> false);
    }

    // ---- describe, list, force release

    @Override
    public CompletionStage<LockInfo> describe(LockKey key) {
        return describeAt(key.kind(), NodeLayout.resourcePath(key), key.name())
                .thenApply(info -> info != null ? info : new LockInfo(key.name(), key.kind(), List.of(), 0));
    }

    /** Describes the resource at a path; the name is read from node data when not given. Null if empty. */
    private CompletableFuture<LockInfo> describeAt(String kind, String path, String knownName) {
        if (kind.equals(Mode.EXCLUSIVE.kind())) {
            return getData(path, null).thenApply(event -> {
                if (code(event) == KeeperException.Code.NONODE) {
                    return null;
                }
                if (code(event) != KeeperException.Code.OK) {
                    throw failure(event);
                }
                Data data = Data.parse(event.getData());
                if (data == null) {
                    return null;
                }
                return new LockInfo(
                        data.name(),
                        kind,
                        List.of(new LockInfo.Holder(
                                data.owner(), event.getStat().getCzxid(), "exclusive", null)),
                        0);
            });
        }
        return getChildren(path).thenCompose(event -> {
            if (code(event) == KeeperException.Code.NONODE) {
                return CompletableFuture.completedFuture(null);
            }
            if (code(event) != KeeperException.Code.OK) {
                throw failure(event);
            }
            List<Entry> entries = sortedEntries(event.getChildren());
            List<CompletableFuture<CuratorEvent>> reads = new ArrayList<>();
            for (Entry e : entries) {
                reads.add(getData(path + "/" + e.node(), null));
            }
            return CompletableFuture.allOf(reads.toArray(CompletableFuture[]::new))
                    .thenApply(done -> queueInfo(kind, knownName, entries, reads));
        });
    }

    private static LockInfo queueInfo(
            String kind, String knownName, List<Entry> entries, List<CompletableFuture<CuratorEvent>> reads) {
        List<LockInfo.Holder> holders = new ArrayList<>();
        String name = knownName;
        int live = 0;
        boolean writerSeen = false;
        for (int i = 0; i < entries.size(); i++) {
            CuratorEvent read = reads.get(i).join();
            Data data = code(read) == KeeperException.Code.OK ? Data.parse(read.getData()) : null;
            if (data == null) {
                continue; // gone meanwhile
            }
            if (name == null) {
                name = data.name();
            }
            Entry e = entries.get(i);
            boolean holds =
                    switch (e.mode()) {
                        case FAIR -> live == 0;
                        case WRITE -> live == 0 && !QueueRules.downgradeBeside(entries, e);
                        case READ -> !writerSeen || e.downgrade();
                        case PERMIT -> live < data.permits();
                        default -> false;
                    };
            if (e.mode() == Mode.WRITE) {
                writerSeen = true;
            }
            live++;
            if (holds) {
                holders.add(new LockInfo.Holder(
                        e.owner(), read.getStat().getCzxid(), e.mode().name().toLowerCase(), null));
            }
        }
        if (name == null) {
            return null;
        }
        return new LockInfo(name, kind, holders, live - holders.size());
    }

    @Override
    public CompletionStage<List<LockInfo>> list(String namespace, String prefix) {
        List<CompletableFuture<List<LockInfo>>> kinds = new ArrayList<>();
        for (String kind : new String[] {"lock", "fair", "rw", "sem"}) {
            String dir = NodeLayout.kindDir(namespace, kind);
            kinds.add(getChildren(dir).thenCompose(event -> {
                if (code(event) == KeeperException.Code.NONODE) {
                    return CompletableFuture.completedFuture(List.of());
                }
                if (code(event) != KeeperException.Code.OK) {
                    throw failure(event);
                }
                List<CompletableFuture<LockInfo>> infos = new ArrayList<>();
                for (String segment : event.getChildren()) {
                    if (NodeLayout.isGuard(segment)) {
                        continue;
                    }
                    boolean complete = NodeLayout.isComplete(segment);
                    String name = complete ? NodeLayout.readablePart(segment) : null;
                    if (complete && !name.startsWith(prefix)) {
                        continue;
                    }
                    infos.add(describeAt(kind, dir + "/" + segment, name));
                }
                return CompletableFuture.allOf(infos.toArray(CompletableFuture[]::new))
                        .thenApply(done -> {
                            List<LockInfo> held = new ArrayList<>();
                            for (CompletableFuture<LockInfo> f : infos) {
                                LockInfo info = f.join();
                                if (info != null
                                        && !info.holders().isEmpty()
                                        && info.name().startsWith(prefix)) {
                                    held.add(info);
                                }
                            }
                            return held;
                        });
            }));
        }
        return CompletableFuture.allOf(kinds.toArray(CompletableFuture[]::new)).thenApply(done -> {
            List<LockInfo> all = new ArrayList<>();
            for (CompletableFuture<List<LockInfo>> f : kinds) {
                all.addAll(f.join());
            }
            return all;
        });
    }

    @Override
    public CompletionStage<Boolean> forceRelease(LockKey key) {
        String resource = NodeLayout.resourcePath(key);
        CompletableFuture<Boolean> removed;
        if (key.mode() == Mode.EXCLUSIVE) {
            removed = holders.forceDelete(resource);
        } else {
            removed = getChildren(resource).thenCompose(event -> {
                if (code(event) == KeeperException.Code.NONODE) {
                    return CompletableFuture.completedFuture(false);
                }
                if (code(event) != KeeperException.Code.OK) {
                    throw failure(event);
                }
                List<CompletableFuture<Boolean>> deletes = new ArrayList<>();
                for (String child : event.getChildren()) {
                    deletes.add(Background.delete(client, resource + "/" + child));
                }
                return CompletableFuture.allOf(deletes.toArray(CompletableFuture[]::new))
                        .thenApply(done -> deletes.stream().anyMatch(CompletableFuture::join));
            });
        }
        return removed.thenApply(any -> {
            for (Node node : nodes.values()) {
                if (node.resource.equals(resource)) {
                    holdGone(node);
                }
            }
            wake(resource, null);
            return any;
        });
    }

    // ---- requests

    /**
     * Creates a node and any missing parent CONTAINER nodes. The server may reap an empty parent container
     * between Curator creating it and creating the child (NONODE, nothing created), so that is retried.
     */
    private CompletableFuture<CuratorEvent> create(String path, CreateMode mode, byte[] data) {
        return create(path, mode, data, 0);
    }

    private CompletableFuture<CuratorEvent> create(String path, CreateMode mode, byte[] data, int tries) {
        return Background.run(cb -> client.create()
                        .creatingParentContainersIfNeeded()
                        .withMode(mode)
                        .inBackground(cb)
                        .forPath(path, data))
                .thenCompose(event -> code(event) == KeeperException.Code.NONODE && tries + 1 < MAX_TRIES
                        ? create(path, mode, data, tries + 1)
                        : CompletableFuture.completedFuture(event));
    }

    private CompletableFuture<CuratorEvent> getData(String path, Watcher watcher) {
        return Background.run(cb -> {
            if (watcher == null) {
                client.getData().inBackground(cb).forPath(path);
            } else {
                client.getData().usingWatcher(watcher).inBackground(cb).forPath(path);
            }
        });
    }

    private CompletableFuture<CuratorEvent> getChildren(String path) {
        return Background.run(cb -> client.getChildren().inBackground(cb).forPath(path));
    }

    // ---- closing

    @Override
    public void close() {
        if (closed) {
            return;
        }
        closed = true;
        session.stop();
        timer.shutdownNow();
        if (ownsClient) {
            client.close(); // ends the session: every ephemeral node of ours goes with it
            return;
        }
        // A shared client lives on: remove what is left of ours.
        for (Node node : nodes.values()) {
            release(node.key, node.owner);
        }
        synchronized (interests) {
            for (var e : interests.entrySet()) {
                if (e.getValue().watchSet) {
                    removePermitWatch(e.getKey());
                }
            }
            interests.clear();
        }
    }

    /** The Curator client this backend talks through (for tests of session faults). */
    CuratorFramework curator() {
        return client;
    }

    @Override
    public String toString() {
        return "ZooKeeperBackend[" + client.getZookeeperClient().getCurrentConnectionString()
                + (client.getNamespace() == null || client.getNamespace().isEmpty() ? "" : "/" + client.getNamespace())
                + "]";
    }
}
