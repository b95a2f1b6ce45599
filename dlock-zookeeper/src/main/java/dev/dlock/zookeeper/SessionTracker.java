package dev.dlock.zookeeper;

import java.util.concurrent.ScheduledExecutorService;
import java.util.concurrent.ScheduledFuture;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.locks.ReentrantLock;
import org.apache.curator.framework.CuratorFramework;
import org.apache.curator.framework.state.ConnectionState;
import org.apache.curator.framework.state.ConnectionStateListener;

/**
 * Follows the Curator connection and the ZooKeeper session behind it, and decides whether the leases of
 * this client can still be trusted. The lease of every dlock hold on ZooKeeper is the session: its
 * ephemeral nodes live exactly as long as the session.
 *
 * <p>Rules: leases are valid while connected, and for two thirds of the negotiated session timeout after
 * the connection was suspended (the server keeps the session for the whole timeout after the last
 * heartbeat it saw, so two thirds leave a margin for the heartbeat interval and clock rates). Past that,
 * every lease is in doubt: the holders are told they lost, and if the same session comes back the nodes
 * are deleted. {@code LOST} from Curator, or a reconnect under a new session id, means the session is
 * gone together with its nodes.
 *
 * <p>Concurrency: Curator calls {@link #stateChanged} on its connection-state thread; the grace timer runs
 * on the backend's timer thread; {@link #leasesValid()} is read from any thread. State changes happen
 * under one lock; callbacks into the backend are made after it is released.
 *
 * <p>Failure modes: Curator delivers state changes asynchronously, so an operation may already run in a
 * new session when {@code LOST} arrives. The backend therefore identifies every node by the session that
 * created it ({@code ephemeralOwner}) rather than by the order of events.
 */
final class SessionTracker implements ConnectionStateListener {
    /** What the backend does when the session changes. */
    interface Callbacks {
        /** The session {@code deadSession} is gone, with all its nodes. */
        void sessionLost(String reason, long deadSession);

        /** The connection was suspended too long: holds can no longer be trusted. */
        void leasesInDoubt(String reason);

        /** Connected again, in the same session or in a new one. */
        void reconnected(long session, boolean sameSession);
    }

    private final CuratorFramework client;
    private final ScheduledExecutorService timer;
    private final int configuredSessionTimeoutMs;
    private final Callbacks callbacks;
    private final ReentrantLock lock = new ReentrantLock();
    private long session;
    private long reportedLost;
    private long suspendedAtNanos;
    private ScheduledFuture<?> grace;
    private volatile boolean valid = true;
    private volatile long suspendedSince;

    SessionTracker(
            CuratorFramework client,
            ScheduledExecutorService timer,
            int configuredSessionTimeoutMs,
            Callbacks callbacks) {
        this.client = client;
        this.timer = timer;
        this.configuredSessionTimeoutMs = configuredSessionTimeoutMs;
        this.callbacks = callbacks;
    }

    /** Starts listening; the client is connected at this point. */
    void start() {
        lock.lock();
        try {
            session = currentSession();
        } finally {
            lock.unlock();
        }
        client.getConnectionStateListenable().addListener(this);
    }

    void stop() {
        client.getConnectionStateListenable().removeListener(this);
        lock.lock();
        try {
            cancelGrace();
        } finally {
            lock.unlock();
        }
    }

    /** The id of the session that new nodes are created in; 0 when there is none. */
    long currentSession() {
        try {
            return client.getZookeeperClient().getZooKeeper().getSessionId();
        } catch (Exception e) {
            return 0;
        }
    }

    /** Leases are trustworthy: connected, or suspended for less than the grace period. */
    boolean leasesValid() {
        if (!valid) {
            return false;
        }
        long since = suspendedSince;
        return since == 0 || System.nanoTime() - since < graceNanos();
    }

    /** Two thirds of the negotiated session timeout. */
    long graceNanos() {
        int negotiated = client.getZookeeperClient().getLastNegotiatedSessionTimeoutMs();
        int timeout = negotiated > 0 ? negotiated : configuredSessionTimeoutMs;
        return TimeUnit.MILLISECONDS.toNanos(timeout) * 2 / 3;
    }

    @Override
    public void stateChanged(CuratorFramework c, ConnectionState newState) {
        switch (newState) {
            case CONNECTED, RECONNECTED -> connected();
            case SUSPENDED, READ_ONLY -> suspended();
            case LOST -> lost();
        }
    }

    private void connected() {
        long now = currentSession();
        long old;
        boolean reportLost;
        lock.lock();
        try {
            old = session;
            session = now;
            cancelGrace();
            suspendedAtNanos = 0;
            suspendedSince = 0;
            valid = true;
            reportLost = old != 0 && old != now && reportedLost != old;
            if (reportLost) {
                reportedLost = old;
            }
        } finally {
            lock.unlock();
        }
        if (reportLost) {
            callbacks.sessionLost("the ZooKeeper session expired", old);
        }
        callbacks.reconnected(now, old == now);
    }

    private void suspended() {
        lock.lock();
        try {
            if (suspendedAtNanos != 0) {
                return;
            }
            suspendedAtNanos = System.nanoTime();
            suspendedSince = suspendedAtNanos;
            cancelGrace();
            long at = suspendedAtNanos;
            grace = timer.schedule(() -> graceOver(at), graceNanos(), TimeUnit.NANOSECONDS);
        } finally {
            lock.unlock();
        }
    }

    private void graceOver(long suspendedAt) {
        lock.lock();
        try {
            if (suspendedAtNanos != suspendedAt || !valid) {
                return;
            }
            valid = false;
        } finally {
            lock.unlock();
        }
        callbacks.leasesInDoubt("the ZooKeeper connection was suspended for longer than 2/3 of the session timeout");
    }

    private void lost() {
        long dead;
        boolean report;
        lock.lock();
        try {
            valid = false;
            cancelGrace();
            dead = session;
            report = reportedLost != dead;
            reportedLost = dead;
        } finally {
            lock.unlock();
        }
        if (report) {
            callbacks.sessionLost("the ZooKeeper session was lost", dead);
        }
    }

    private void cancelGrace() {
        if (grace != null) {
            grace.cancel(false);
            grace = null;
        }
    }
}
