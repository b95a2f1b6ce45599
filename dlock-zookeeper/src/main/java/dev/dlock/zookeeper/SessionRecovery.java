package dev.dlock.zookeeper;

import dev.dlock.spi.BackendContext;
import java.util.ArrayList;
import java.util.List;

/**
 * What the backend does with its nodes when the session changes ({@link SessionTracker.Callbacks}).
 *
 * <ul>
 *   <li>Session lost (Curator's LOST, or a reconnect in a new session): every hold ends and every holder
 *       is told at once ({@code allLeasesLost}); waiting entries of the dead session queue again on
 *       their next attempt; holds made meanwhile in a newer session are deleted.
 *   <li>Leases in doubt (no reply for nearly a session timeout): every hold ends and its node is kept
 *       for deletion once the same session answers again; the holders are told at once. (The engine's
 *       watchdog, the one lease clock, also looks at the session's end, {@link
 *       SessionTracker#liveUntilNanos()}, so no lease outlives the session should this report be late.)
 *   <li>Reconnected: nodes given up while the connection failed are deleted if this is their session;
 *       nodes of creates with a lost answer are swept; every subscriber is woken (a watch may be gone).
 * </ul>
 *
 * <p>Threads: Curator's connection-state thread, or the backend's timer (the heartbeat that notices a
 * doubt or a revived session); never blocks.
 */
final class SessionRecovery implements SessionTracker.Callbacks {
    private final OwnNodes nodes;
    private final Wakeups wakeups;
    private final BackendContext.BackendEvents events;
    private volatile boolean closed;

    SessionRecovery(OwnNodes nodes, Wakeups wakeups, BackendContext.BackendEvents events) {
        this.nodes = nodes;
        this.wakeups = wakeups;
        this.events = events;
    }

    void close() {
        closed = true;
    }

    @Override
    public void sessionLost(String reason, long deadSession) {
        for (Node node : nodes.all()) {
            synchronized (node) {
                if (node.state == Node.State.WAITING && node.session == deadSession) {
                    wakeups.removeWaiter(node);
                    node.path = null; // the next attempt queues again
                    node.state = Node.State.NEW;
                }
            }
        }
        nodes.staleSessionGone(deadSession);
        for (Node node : endHolds()) {
            if (node.session != deadSession) {
                nodes.deleteQuietly(node); // held in a newer session, but its lease is declared lost below
            }
        }
        events.allLeasesLost(reason);
    }

    @Override
    public void leasesInDoubt(String reason) {
        for (Node node : endHolds()) {
            nodes.addStale(node);
        }
        events.allLeasesLost(reason);
    }

    /** Ends every hold of this client and drops it from the registry; the nodes that were held. */
    private List<Node> endHolds() {
        List<Node> ended = new ArrayList<>();
        for (Node node : nodes.all()) {
            synchronized (node) {
                if (node.state != Node.State.HELD) {
                    continue;
                }
                node.state = Node.State.ENDED;
            }
            nodes.drop(node);
            ended.add(node);
        }
        return ended;
    }

    @Override
    public void reconnected(long currentSession, boolean sameSession) {
        if (closed) {
            return;
        }
        nodes.retryStale(currentSession);
        nodes.sweepSuspects();
        wakeups.reconnected(sameSession);
    }
}
