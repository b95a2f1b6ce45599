package dev.dlock.zookeeper;

import static dev.dlock.zookeeper.Background.code;

import dev.dlock.spi.RenewRequest;
import java.util.ArrayList;
import java.util.HashSet;
import java.util.List;
import java.util.Set;
import java.util.concurrent.TimeUnit;
import org.apache.curator.framework.api.CuratorEvent;
import org.apache.zookeeper.KeeperException;
import org.apache.zookeeper.WatchedEvent;
import org.apache.zookeeper.Watcher;

/**
 * Held nodes: when a node may be handed out as a grant, and how this client learns that a held node is
 * gone.
 *
 * <p>The lease of a hold is the session ({@link SessionTracker}), and the engine's watchdog is the only
 * clock: this class keeps no expiry. {@link #renew} sends nothing; it answers from what this client
 * knows, namely whether the node it created is still held in the session the tracker accepted, while
 * that session is live. The check behind that answer is one watch per held node, armed at the grant
 * (for the exclusive lock by the read that also gives the token, for entries by one {@code exists}): a
 * node removed by someone else ({@code forceRelease}) is then reported lost at the next renewal without
 * any request per renewal tick.
 *
 * <p>Invariants: a grant is handed out only if its node was made in the accepted, live session and the
 * answer came within half the lease time of the attempt; a node renew reports lost is ENDED first (the
 * engine never releases a lost lease), then deleted; a deletion event counts only after a check shows
 * that the node at the path is not ours any more (an exclusive path is reused by the next holder).
 *
 * <p>Threads: grants and watch events run on ZooKeeper's event thread, {@link #renew} on the engine's
 * scheduler thread; node fields are changed under the node's monitor.
 */
final class HeldNodes {
    /** When a grant was refused because the session is in transition: ask again this soon. */
    static final long REFUSED_RETRY_MS = 50;

    private final Requests requests;
    private final OwnNodes nodes;
    private final SessionTracker session;
    /** The watch that reports a held node's deletion. */
    final Watcher deletionWatcher = this::deletionEvent;

    HeldNodes(Requests requests, OwnNodes nodes, SessionTracker session) {
        this.requests = requests;
        this.nodes = nodes;
        this.session = session;
    }

    /**
     * Whether a node made for an attempt that reached the backend at {@code attemptNanos} may be handed
     * out: its session is the accepted one and live, and the answer came within half the lease time (a
     * request Curator held back while reconnecting can be answered long after the engine sent it, and the
     * engine counts the lease from the send).
     */
    boolean grantable(long nodeSession, long attemptNanos, long leaseMillis) {
        return session.mayGrant(nodeSession, attemptNanos)
                && System.nanoTime() - attemptNanos < TimeUnit.MILLISECONDS.toNanos(leaseMillis) / 2;
    }

    /**
     * Marks a node held and arms the watch that notices its deletion by someone else (at the grant, so a
     * force-release at any time is noticed). Called under the node's monitor.
     */
    void hold(Node node, long leaseMillis) {
        node.state = Node.State.HELD;
        node.leaseMillis = leaseMillis;
        if (!node.deletionWatchArmed) {
            node.deletionWatchArmed = true;
            watchDeletion(node);
        }
    }

    /** The longest a waiter should wait before asking again while the local {@code owner} holds. */
    long retryHint(String owner) {
        Node local = owner == null ? null : nodes.get(owner);
        if (local == null) {
            return -1;
        }
        synchronized (local) {
            return local.state == Node.State.HELD ? local.leaseMillis : 0;
        }
    }

    /**
     * Answers a renewal from local state: held in the accepted session while it is live. A hold that
     * fails that test is given up (ENDED, deleted) and reported lost.
     */
    Set<String> renew(List<RenewRequest> batch) {
        boolean valid = session.leasesValid();
        long current = session.currentSession();
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
                        if (!node.deletionWatchArmed) {
                            node.deletionWatchArmed = true; // the grant's watch failed: arm it now
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
            watchDeletion(node);
        }
        for (Node node : givenUp) {
            nodes.drop(node);
            nodes.deleteQuietly(node); // harmless for a node of a dead session; else retried on reconnect
        }
        return lost;
    }

    /** Arms an exists watch on a held node, so that its deletion by someone else is noticed. */
    private void watchDeletion(Node node) {
        nodes.watchingHold(node.path, node);
        requests.exists(node.path, deletionWatcher).thenAccept(event -> {
            if (notOurs(node, event)) {
                holdGone(node);
            } else if (code(event) != KeeperException.Code.OK) {
                synchronized (node) {
                    node.deletionWatchArmed = false; // try again at the next renewal
                }
            }
        });
    }

    /** A watched node was deleted: ours, or (an exclusive path) a former holder's? */
    void deletionEvent(WatchedEvent event) {
        if (event.getType() != Watcher.Event.EventType.NodeDeleted) {
            return;
        }
        Node node = nodes.watchedHoldAt(event.getPath());
        if (node == null) {
            return;
        }
        synchronized (node) {
            if (node.state != Node.State.HELD) {
                return; // our own release
            }
        }
        requests.exists(node.path, null).thenAccept(check -> {
            if (notOurs(node, check)) {
                holdGone(node);
            }
        });
    }

    private static boolean notOurs(Node node, CuratorEvent check) {
        return code(check) == KeeperException.Code.NONODE
                || (code(check) == KeeperException.Code.OK && check.getStat().getCzxid() != node.czxid);
    }

    /** Someone else removed our held node: the next renewal reports it lost. */
    void holdGone(Node node) {
        synchronized (node) {
            if (node.state != Node.State.HELD) {
                return;
            }
            node.state = Node.State.ENDED;
        }
        nodes.drop(node);
    }
}
