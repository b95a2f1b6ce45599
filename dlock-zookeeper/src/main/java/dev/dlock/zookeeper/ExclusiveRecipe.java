package dev.dlock.zookeeper;

import static dev.dlock.zookeeper.Background.code;
import static dev.dlock.zookeeper.Background.failure;

import dev.dlock.spi.AcquireRequest;
import dev.dlock.spi.AcquireResult;
import dev.dlock.spi.LockKey;
import dev.dlock.spi.OrderTokens;
import dev.dlock.zookeeper.NodeLayout.Data;
import java.util.concurrent.CompletableFuture;
import org.apache.curator.framework.api.CuratorEvent;
import org.apache.zookeeper.KeeperException;
import org.apache.zookeeper.Watcher;
import org.apache.zookeeper.data.Stat;

/**
 * The exclusive lock: one EPHEMERAL node per name, created and deleted with its guard in one transaction
 * ({@link HolderNodes}).
 *
 * <p>An attempt is one round trip: a read pipelined behind the create gives the token and arms the
 * hold's deletion watch, or for a busy answer gives the holder (which also finds our own node after a
 * create that Curator retried) and arms the wake-up watch. The same data watch serves both, so it is
 * delivered to {@link HeldNodes} and to {@link Wakeups}.
 *
 * <p>Invariants: a node is taken for ours only if its data names our owner id and its {@code
 * ephemeralOwner} is the current session; a grant the session tracker refuses is deleted before the
 * attempt answers busy, so that the retry cannot take it for its own; a node found gone between the
 * create and the read is retried (at most {@link #MAX_TRIES} times) without a guard of ours left over.
 *
 * <p>Threads: the attempt starts on an engine thread; everything after the first answer runs on
 * ZooKeeper's event thread and never blocks.
 */
final class ExclusiveRecipe {
    private static final int MAX_TRIES = 5;

    private final Requests requests;
    private final HolderNodes holders;
    private final OwnNodes nodes;
    private final HeldNodes held;
    private final SessionTracker session;
    /** On an exclusive node: the hold's deletion watch for its holder, the wake-up watch for waiters. */
    private final Watcher exclusiveWatcher;

    ExclusiveRecipe(
            Requests requests,
            HolderNodes holders,
            OwnNodes nodes,
            HeldNodes held,
            Wakeups wakeups,
            SessionTracker session) {
        this.requests = requests;
        this.holders = holders;
        this.nodes = nodes;
        this.held = held;
        this.session = session;
        this.exclusiveWatcher = event -> {
            held.deletionEvent(event);
            wakeups.nodeWatcher.process(event);
        };
    }

    CompletableFuture<AcquireResult> acquire(AcquireRequest request) {
        return acquire(request, 0);
    }

    private CompletableFuture<AcquireResult> acquire(AcquireRequest request, int tries) {
        LockKey key = request.key();
        long attempt = System.nanoTime();
        Node node = nodes.getOrAdd(request.owner(), owner -> new Node(key, owner, 1));
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
        CompletableFuture<CuratorEvent> read = requests.getData(path, exclusiveWatcher);
        return create.thenCompose(event -> switch (code(event)) {
            case OK -> {
                synchronized (node) {
                    node.deletionWatchArmed = true; // the read that confirms the grant arms the hold's watch
                    nodes.watchingHold(path, node);
                }
                yield read.handle((answer, error) -> error == null && ours(answer, request) ? answer : null)
                        .thenCompose(answer -> answer != null
                                ? decide(node, request, tries, answer, true)
                                : readAgain(node, request, tries, true));
            }
            case NODEEXISTS -> {
                synchronized (node) {
                    node.creating = false;
                }
                yield read.handle((answer, error) -> error == null ? answer : null)
                        .thenCompose(answer -> answer != null
                                ? decide(node, request, tries, answer, false)
                                : readAgain(node, request, tries, false));
            }
            default -> {
                nodes.createFailed(node, event);
                throw failure(event);
            }
        });
    }

    /**
     * Reads the exclusive node again: ours (just created, or after a retried create) or another holder's.
     * Just after our create the read's data watch is the hold's watch (a deletion by someone else is
     * noticed from the grant on); for a waiting attempt that meets another holder it is the wake-up watch.
     */
    private CompletableFuture<AcquireResult> readAgain(
            Node node, AcquireRequest request, int tries, boolean justCreated) {
        Watcher watcher = justCreated || request.waiting() ? exclusiveWatcher : null;
        return requests.getData(node.resource, watcher)
                .thenCompose(event -> decide(node, request, tries, event, justCreated));
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
    private CompletableFuture<AcquireResult> decide(
            Node node, AcquireRequest request, int tries, CuratorEvent event, boolean justCreated) {
        String path = node.resource;
        switch (code(event)) {
            case OK -> {
                if (ours(event, request)) {
                    return created(node, path, event.getStat(), request);
                }
                Data data = Data.parse(event.getData());
                nodes.forget(node);
                return CompletableFuture.completedFuture(
                        AcquireResult.busy(held.retryHint(data == null ? null : data.owner())));
            }
            case NONODE -> {
                synchronized (node) {
                    node.deletionWatchArmed = false;
                }
                nodes.notWatchingHold(path, node);
                if (tries + 1 >= MAX_TRIES) {
                    nodes.forget(node);
                    return CompletableFuture.completedFuture(AcquireResult.busy(0));
                }
                // Released (or force-released) meanwhile: try again, without a guard of ours left over.
                return holders.deleteGuard(path, request.owner()).thenCompose(ignored -> acquire(request, tries + 1));
            }
            default -> {
                if (justCreated) {
                    nodes.createFailed(node, event); // the node exists: find it again once connected
                } else {
                    nodes.forget(node);
                }
                throw failure(event);
            }
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
        boolean grantable = held.grantable(stat.getEphemeralOwner(), attempt, request.leaseMillis());
        synchronized (node) {
            if (!node.abandoned && grantable) {
                held.hold(node, request.leaseMillis());
                return CompletableFuture.completedFuture(AcquireResult.granted(OrderTokens.ofCreation(node.czxid)));
            }
            if (node.abandoned) {
                nodes.deleteQuietly(node);
                return CompletableFuture.completedFuture(AcquireResult.busy(-1));
            }
            node.state = Node.State.ENDED;
        }
        // Refused: give the node back before answering, so that the retry cannot take it for its own.
        nodes.drop(node);
        return nodes.delete(node).thenApply(deleted -> AcquireResult.busy(HeldNodes.REFUSED_RETRY_MS));
    }
}
