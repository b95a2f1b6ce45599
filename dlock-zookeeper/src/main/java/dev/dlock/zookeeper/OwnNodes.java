package dev.dlock.zookeeper;

import static dev.dlock.zookeeper.Background.code;
import static dev.dlock.zookeeper.Background.failure;

import dev.dlock.zookeeper.NodeLayout.Data;
import dev.dlock.zookeeper.NodeLayout.Entry;
import java.util.ArrayList;
import java.util.Collection;
import java.util.List;
import java.util.Set;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.ConcurrentHashMap;
import java.util.function.Function;
import org.apache.curator.framework.api.CuratorEvent;
import org.apache.zookeeper.KeeperException;

/**
 * Every node this client created, or may have created, and how each one is removed.
 *
 * <p>Owns: the acquisitions by owner id (one {@link Node} each, from the first attempt to the end), the
 * held nodes whose deletion watch is armed (by path), nodes to delete once their session answers again
 * ({@code stale}), and acquisitions whose create failed without a clear answer ({@code suspects}).
 *
 * <p>Invariants: a node leaves the registry only when it is ENDED, or has no node and no create on its
 * way; a node is deleted only through the session that created it (exclusive holders, see {@link
 * HolderNodes}) or by its unique path (entries); a delete that failed leaves the node in {@code stale},
 * retried by {@link #retryStale} when the same session is connected again; a suspect's node, found by
 * its owner id in the current session, is deleted by {@link #sweepSuspects}.
 *
 * <p>Threads: the engine's threads (acquire, release) and ZooKeeper's event thread (answers, watches);
 * the collections are concurrent and node fields are changed under the node's monitor.
 */
final class OwnNodes {
    private final Requests requests;
    private final HolderNodes holders;
    private final Wakeups wakeups;
    private final SessionTracker session;
    private final ConcurrentHashMap<String, Node> byOwner = new ConcurrentHashMap<>();
    private final ConcurrentHashMap<String, Node> watchedHolds = new ConcurrentHashMap<>();
    private final Set<Node> stale = ConcurrentHashMap.newKeySet();
    private final Set<Node> suspects = ConcurrentHashMap.newKeySet();

    OwnNodes(Requests requests, HolderNodes holders, Wakeups wakeups, SessionTracker session) {
        this.requests = requests;
        this.holders = holders;
        this.wakeups = wakeups;
        this.session = session;
    }

    // ---- the registry

    Node get(String owner) {
        return byOwner.get(owner);
    }

    Node getOrAdd(String owner, Function<String, Node> create) {
        return byOwner.computeIfAbsent(owner, create);
    }

    Collection<Node> all() {
        return byOwner.values();
    }

    int size() {
        return byOwner.size();
    }

    /** Removes an ended acquisition from the registry and from the watched holds. */
    void drop(Node node) {
        byOwner.remove(node.owner, node);
        String path;
        synchronized (node) {
            path = node.path;
        }
        if (path != null) {
            watchedHolds.remove(path, node);
        }
    }

    /** The held node whose deletion watch is armed at {@code path}, or null. */
    Node watchedHoldAt(String path) {
        return watchedHolds.get(path);
    }

    void watchingHold(String path, Node node) {
        watchedHolds.put(path, node);
    }

    void notWatchingHold(String path, Node node) {
        watchedHolds.remove(path, node);
    }

    /** Drops an acquisition that has no node (and no create on its way). */
    void forget(Node node) {
        synchronized (node) {
            if (node.state == Node.State.HELD || node.creating) {
                return;
            }
            node.state = Node.State.ENDED;
            node.deletionWatchArmed = false;
            wakeups.removeWaiter(node);
        }
        byOwner.remove(node.owner, node);
        watchedHolds.remove(node.resource, node);
    }

    // ---- releasing

    /**
     * Ends an acquisition and deletes its node; true if it was held and its node deleted. A create still
     * on its way deletes its node on arrival ({@link Node#abandoned}).
     */
    CompletableFuture<Boolean> release(String owner) {
        Node node = byOwner.get(owner);
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
            wakeups.removeWaiter(node);
        }
        byOwner.remove(owner, node);
        if (path == null) {
            return CompletableFuture.completedFuture(false);
        }
        watchedHolds.remove(path, node);
        return delete(node)
                .whenComplete((deleted, error) -> {
                    if (error != null) {
                        // Not deleted (the connection was lost at that moment): the node would outlive the
                        // release for as long as the session lives. The engine retries the release, which
                        // finds the node again; a reconnection in the same session deletes it too.
                        byOwner.putIfAbsent(owner, node);
                        stale.add(node);
                    }
                })
                .thenApply(deleted -> deleted && held);
    }

    /** Deletes an acquisition's node; true if it existed. */
    CompletableFuture<Boolean> delete(Node node) {
        String path;
        long owner;
        synchronized (node) {
            path = node.path;
            owner = node.session;
        }
        if (path == null) {
            return CompletableFuture.completedFuture(false);
        }
        return node.exclusive() ? holders.delete(path, node.owner, owner) : requests.deleteEntry(path);
    }

    /** Deletes a node; if that fails, once its session answers again. */
    void deleteQuietly(Node node) {
        delete(node).exceptionally(error -> {
            stale.add(node);
            return false;
        });
    }

    // ---- nodes left behind

    /** Deletes the nodes given up while the connection failed, if {@code current} is their session. */
    void retryStale(long current) {
        for (Node node : takeAll(stale)) {
            if (node.session == current) {
                deleteQuietly(node);
            }
        }
    }

    /**
     * Empties a set and returns what it held. A delete or sweep that fails at once (a closed client)
     * puts its node back in the set from inside the loop; iterating the live set would meet it again,
     * forever.
     */
    private static List<Node> takeAll(Set<Node> set) {
        List<Node> taken = new ArrayList<>(set);
        taken.forEach(set::remove);
        return taken;
    }

    /** Forgets the nodes to delete of a session that is gone (they went with it). */
    void staleSessionGone(long deadSession) {
        stale.removeIf(node -> node.session == deadSession);
    }

    void addStale(Node node) {
        stale.add(node);
    }

    /** A create failed without a clear answer: the node may exist, so look for it once connected. */
    void createFailed(Node node, CuratorEvent event) {
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

    /** Deletes nodes that creates with a lost answer may have left, once they can be found. */
    void sweepSuspects() {
        long current = session.currentSession();
        for (Node node : takeAll(suspects)) {
            CompletableFuture<?> sweep = node.exclusive() ? sweepHolder(node, current) : sweepEntries(node);
            sweep.exceptionally(error -> {
                suspects.add(node);
                return null;
            });
        }
    }

    private CompletableFuture<?> sweepHolder(Node node, long current) {
        return requests.getData(node.resource, null).thenCompose(event -> {
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
            return delete(node);
        });
    }

    private CompletableFuture<?> sweepEntries(Node node) {
        return requests.getChildren(node.resource).thenAccept(event -> {
            if (code(event) == KeeperException.Code.NONODE) {
                return;
            }
            if (code(event) != KeeperException.Code.OK) {
                throw failure(event);
            }
            for (Entry e : Requests.sortedEntries(event.getChildren())) {
                if (e.owner().equals(node.owner)) {
                    requests.deleteEntryQuietly(node.resource + "/" + e.node());
                }
            }
        });
    }
}
