package dev.dlock.zookeeper;

import static dev.dlock.zookeeper.Background.code;
import static dev.dlock.zookeeper.Background.failure;

import dev.dlock.LockBackendException;
import dev.dlock.spi.AcquireRequest;
import dev.dlock.spi.AcquireResult;
import dev.dlock.spi.Mode;
import dev.dlock.zookeeper.NodeLayout.Entry;
import java.util.ArrayList;
import java.util.List;
import java.util.Set;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.ConcurrentHashMap;
import org.apache.curator.utils.ZKPaths;
import org.apache.zookeeper.CreateMode;
import org.apache.zookeeper.KeeperException;

/**
 * The queue recipe of the fair lock, the read-write lock and the semaphore: one EPHEMERAL_SEQUENTIAL
 * entry per acquisition, created on its first attempt and kept while it waits, then {@code getChildren}
 * to see its place ({@link QueueRules}).
 *
 * <p>A waiter watches only the node it waits for (its predecessor, or the entry that blocks it) with a
 * {@code getData} watch, which ZooKeeper does not register when the node is already gone (the queue is
 * then read again). Semaphore waiters instead count down the entries ahead of them ({@link Node#ahead})
 * from the semaphore's persistent watch ({@link Wakeups}), so a release makes only the waiter it admits
 * ask the store.
 *
 * <p>Invariants: one entry per acquisition (duplicates from a create Curator retried are deleted); a
 * non-waiting attempt that is not granted deletes its entry before answering; an entry found gone (force
 * release, expired session) queues again at the end; a downgraded read whose write entry is gone fails,
 * granted by the read rule or not ({@link QueueRules#downgradeWithoutItsWrite}): it would take a token in
 * the deleted write's room, below that of a writer granted since, or wait behind writers that wait for it.
 *
 * <p>Threads: the attempt starts on an engine thread, and a create's answer may be handled there when it
 * comes before its continuation is attached; the decision on a read of the queue always runs on
 * ZooKeeper's event thread, in the order of the answers and watch events (it is attached before the read
 * is sent), and nothing blocks.
 */
final class QueueRecipe {
    private static final int MAX_TRIES = 5;

    private final Requests requests;
    private final OwnNodes nodes;
    private final HeldNodes held;
    private final Wakeups wakeups;
    private final SessionTracker session;

    QueueRecipe(Requests requests, OwnNodes nodes, HeldNodes held, Wakeups wakeups, SessionTracker session) {
        this.requests = requests;
        this.nodes = nodes;
        this.held = held;
        this.wakeups = wakeups;
        this.session = session;
    }

    CompletableFuture<AcquireResult> acquire(AcquireRequest request) {
        long attempt = System.nanoTime();
        Node node = nodes.getOrAdd(request.owner(), owner -> new Node(request.key(), owner, request.permits()));
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
        WriteEntry write = heldWrite(request);
        byte[] data = NodeLayout.data(node.owner, request.permits(), node.key.name(), write == null ? 0 : write.czxid);
        String prefix = write == null
                ? NodeLayout.entryPathPrefix(node.key, node.owner)
                : NodeLayout.downgradePathPrefix(node.key, node.owner, write.sequence);
        return requests.create(prefix, CreateMode.EPHEMERAL_SEQUENTIAL, data).thenApply(event -> {
            if (code(event) != KeeperException.Code.OK) {
                nodes.createFailed(node, event);
                throw failure(event);
            }
            Entry entry = Entry.parse(ZKPaths.getNodeFromPath(event.getName()));
            boolean abandoned;
            synchronized (node) {
                node.creating = false;
                node.path = event.getName();
                node.czxid = event.getStat().getCzxid();
                node.writeCzxid = write == null ? 0 : write.czxid;
                node.session = event.getStat().getEphemeralOwner();
                node.sequence = entry == null ? -1 : entry.sequence();
                abandoned = node.abandoned;
                if (!abandoned) {
                    node.state = Node.State.WAITING;
                }
            }
            if (abandoned) {
                nodes.deleteQuietly(node);
            }
            return null;
        });
    }

    /** The write entry a downgrade's read comes from. */
    private record WriteEntry(long sequence, long czxid) {}

    /** For a read taken while this client holds the write entry it names, that entry; else null. */
    private WriteEntry heldWrite(AcquireRequest request) {
        Node writer = request.downgradeFrom() == null ? null : nodes.get(request.downgradeFrom());
        if (writer == null || writer.key.mode() != Mode.WRITE) {
            return null;
        }
        synchronized (writer) {
            return writer.state == Node.State.HELD ? new WriteEntry(writer.sequence, writer.czxid) : null;
        }
    }

    /**
     * Reads the queue and decides: granted, busy (keeping the entry and watching), or busy (dropping it).
     * The decision runs on the event thread in the order of the answer, also when this is called on an
     * engine thread: a semaphore waiter's set of entries ahead then misses no deletion handled after the
     * read (a deletion event handled before the set was filled would be lost, or counted against an older
     * set that the decision then replaces with one holding the deleted entry).
     */
    private CompletableFuture<AcquireResult> evaluate(Node node, AcquireRequest request, int tries) {
        return requests.getChildren(node.resource, event -> {
            KeeperException.Code rc = code(event);
            if (rc != KeeperException.Code.OK && rc != KeeperException.Code.NONODE) {
                throw failure(event);
            }
            List<Entry> entries =
                    Requests.sortedEntries(rc == KeeperException.Code.OK ? event.getChildren() : List.of());
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
                    requests.deleteEntryQuietly(node.resource + "/" + e.node());
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
            wakeups.removeWaiter(node);
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
        if (QueueRules.downgradeWithoutItsWrite(request, queue, index)) {
            // Its write hold is gone (as etcd's KeyLayout.downgradeWithoutItsWrite): granted or not, fail.
            end(node);
            return nodes.delete(node).thenApply(deleted -> {
                throw new LockBackendException("the write hold on '" + node.key.name()
                        + "' to downgrade from is gone; the read hold was not taken");
            });
        }
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
            refused = !held.grantable(nodeSession, attempt, request.leaseMillis());
        }
        if (granted && !refused) {
            synchronized (node) {
                if (node.abandoned) {
                    return CompletableFuture.completedFuture(AcquireResult.busy(-1));
                }
                wakeups.removeWaiter(node);
                held.hold(node, request.leaseMillis());
                return CompletableFuture.completedFuture(AcquireResult.granted(node.token()));
            }
        }
        if (!request.waiting()) {
            end(node);
            return nodes.delete(node).thenApply(deleted -> AcquireResult.busy(-1));
        }
        String watch;
        synchronized (node) {
            if (node.abandoned) {
                return CompletableFuture.completedFuture(AcquireResult.busy(-1));
            }
            node.state = Node.State.WAITING;
            if (refused) {
                node.ahead = null;
                node.blockerPath = null; // first in line: only the session is in question, ask again soon
            } else if (request.key().mode() == Mode.PERMIT) {
                Set<Long> ahead = ConcurrentHashMap.newKeySet();
                for (int i = 0; i < index; i++) {
                    ahead.add(queue.get(i).sequence());
                }
                node.ahead = ahead;
                node.blockerPath = null;
            } else {
                node.blockerPath = node.resource + "/" + blocker.node();
            }
            watch = node.blockerPath;
            wakeups.addWaiter(node);
        }
        if (watch == null) {
            return CompletableFuture.completedFuture(AcquireResult.busy(refused ? HeldNodes.REFUSED_RETRY_MS : -1));
        }
        return requests.getData(watch, wakeups.nodeWatcher).thenCompose(event -> switch (code(event)) {
            case OK -> CompletableFuture.completedFuture(AcquireResult.busy(-1));
            case NONODE ->
                tries + 1 < MAX_TRIES
                        ? evaluate(node, request, tries + 1)
                        : CompletableFuture.completedFuture(AcquireResult.busy(0));
            default -> throw failure(event);
        });
    }

    /** Ends an acquisition whose entry is about to be deleted. */
    private void end(Node node) {
        synchronized (node) {
            node.state = Node.State.ENDED;
        }
        nodes.drop(node);
    }
}
