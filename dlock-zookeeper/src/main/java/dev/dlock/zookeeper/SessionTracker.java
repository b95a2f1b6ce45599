package dev.dlock.zookeeper;

import dev.dlock.spi.SessionLeases;
import java.util.concurrent.ScheduledExecutorService;
import java.util.concurrent.ScheduledFuture;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.locks.ReentrantLock;
import org.apache.curator.framework.CuratorFramework;
import org.apache.curator.framework.state.ConnectionState;
import org.apache.curator.framework.state.ConnectionStateListener;
import org.apache.zookeeper.KeeperException;
import org.apache.zookeeper.ZooKeeper;

/**
 * Follows the Curator connection and the ZooKeeper session behind it, and decides whether the leases of
 * this client can still be trusted. The lease of every dlock hold on ZooKeeper is the session: its
 * ephemeral nodes live exactly as long as the session.
 *
 * <p>Rules: leases are valid while the server is certain to keep the session, counted from its last
 * reply ({@link SessionClock}; a heartbeat read every third of the session timeout keeps the proof
 * fresh). Once that point passes without a newer reply, every lease is in doubt: the holders are told
 * they lost, grants are refused, and the nodes are deleted as soon as the same session answers again.
 * The engine's watchdog reads the same point ({@link #liveUntilNanos()}: this class is the backend's
 * {@link SessionLeases}) and bounds every lease by it. {@code LOST} from
 * Curator, or a reconnect under a new session id, means the session is gone together with its nodes. A
 * grant counts only when made in the session this tracker has accepted ({@link #mayGrant}): a grant that
 * reaches a session Curator is replacing, or one made while leases are in doubt, is refused.
 *
 * <p>Concurrency: Curator calls {@link #stateChanged} on its connection-state thread; heartbeats are sent
 * from the backend's timer thread and answered on ZooKeeper's event thread; {@link #leasesValid()} is read
 * from any thread. State changes happen under one lock; callbacks into the backend are made after it is
 * released.
 *
 * <p>Failure modes: Curator delivers state changes asynchronously, so an operation may already run in a
 * new session when {@code LOST} arrives. The backend therefore identifies every node by the session that
 * created it ({@code ephemeralOwner}) rather than by the order of events, and a heartbeat's answer counts
 * only for the session of the handle it was sent on.
 */
final class SessionTracker implements ConnectionStateListener, SessionLeases {
    /** What the backend does when the session changes. */
    interface Callbacks {
        /** The session {@code deadSession} is gone, with all its nodes. */
        void sessionLost(String reason, long deadSession);

        /** No reply for too long: holds can no longer be trusted. */
        void leasesInDoubt(String reason);

        /** Connected again, in the same session or in a new one (also: the same session answers again). */
        void reconnected(long session, boolean sameSession);
    }

    private static final String NO_REPLY =
            "no reply from ZooKeeper for nearly a session timeout: the server may have expired the session";

    private final CuratorFramework client;
    private final ScheduledExecutorService timer;
    private final int configuredSessionTimeoutMs;
    private volatile Callbacks callbacks;
    private final SessionClock clock;
    private final ReentrantLock lock = new ReentrantLock();
    private volatile long session;
    private long reportedLost;
    private boolean inDoubt;
    private boolean sessionGone;
    private ScheduledFuture<?> tick;
    private volatile boolean stopped;
    private volatile boolean valid = true;

    SessionTracker(CuratorFramework client, ScheduledExecutorService timer, int configuredSessionTimeoutMs) {
        this.client = client;
        this.timer = timer;
        this.configuredSessionTimeoutMs = configuredSessionTimeoutMs;
        this.clock = new SessionClock(this::sessionTimeoutMs);
    }

    /**
     * Starts listening and sends the first heartbeat; the client is connected at this point.
     *
     * @param callbacks what the backend does when the session changes
     */
    void start(Callbacks callbacks) {
        this.callbacks = callbacks;
        lock.lock();
        try {
            session = currentSession();
        } finally {
            lock.unlock();
        }
        client.getConnectionStateListenable().addListener(this);
        tick();
    }

    void stop() {
        stopped = true;
        client.getConnectionStateListenable().removeListener(this);
        lock.lock();
        try {
            if (tick != null) {
                tick.cancel(false);
            }
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

    /** Leases are trustworthy: the session is accepted, not in doubt, and certainly kept by the server. */
    boolean leasesValid() {
        return valid && clock.live();
    }

    /**
     * Until when the server certainly keeps the session: {@link SessionClock#liveUntilNanos()} while the
     * session is accepted and not in doubt; a time already past otherwise. The engine's watchdog marks
     * every lease lost when this passes.
     */
    @Override
    public long liveUntilNanos() {
        return valid && clock.everProven() ? clock.liveUntilNanos() : System.nanoTime() - 1;
    }

    @Override
    public String notLiveReason() {
        return NO_REPLY;
    }

    /**
     * Whether a node that session {@code nodeSession} created for a request sent at {@code sentNanos} may
     * be handed out as a grant. The answer itself proves that session alive since {@code sentNanos}.
     */
    boolean mayGrant(long nodeSession, long sentNanos) {
        proven(nodeSession, sentNanos);
        return nodeSession == session && leasesValid();
    }

    /** The negotiated session timeout (the requested one until a session was negotiated). */
    int sessionTimeoutMs() {
        int negotiated = client.getZookeeperClient().getLastNegotiatedSessionTimeoutMs();
        return negotiated > 0 ? negotiated : configuredSessionTimeoutMs;
    }

    /** A request sent at {@code sentNanos} on a handle of session {@code answeredSession} got an answer. */
    private void proven(long answeredSession, long sentNanos) {
        boolean revived;
        lock.lock();
        try {
            if (answeredSession == 0 || answeredSession != session || sessionGone) {
                return;
            }
            clock.proven(sentNanos);
            revived = inDoubt && clock.live();
            if (revived) {
                inDoubt = false;
                valid = true;
            }
        } finally {
            lock.unlock();
        }
        if (revived) {
            callbacks.reconnected(answeredSession, true); // deletes the nodes given up while in doubt
        }
    }

    /** Sends a heartbeat, checks the clock, and plans the next tick. Runs on the timer thread. */
    private void tick() {
        if (stopped) {
            return;
        }
        heartbeat();
        boolean doubt;
        long next = clock.heartbeatNanos();
        lock.lock();
        try {
            doubt = valid && clock.everProven() && !clock.live();
            if (doubt) {
                valid = false;
                inDoubt = true;
            } else if (valid && clock.everProven()) {
                next = Math.min(next, clock.liveUntilNanos() - System.nanoTime());
            }
            if (!stopped) {
                tick = timer.schedule(
                        this::tick, Math.max(next, TimeUnit.MILLISECONDS.toNanos(1)), TimeUnit.NANOSECONDS);
            }
        } finally {
            lock.unlock();
        }
        if (doubt) {
            callbacks.leasesInDoubt(NO_REPLY);
        }
    }

    /** One cheap read on the raw handle; its answer proves that handle's session. */
    private void heartbeat() {
        ZooKeeper zk;
        try {
            zk = client.getZookeeperClient().getZooKeeper();
        } catch (Exception e) {
            return;
        }
        long id = zk.getSessionId();
        if (id == 0 || !zk.getState().isConnected()) {
            return;
        }
        long sent = System.nanoTime();
        zk.exists(
                "/",
                false,
                (rc, path, ctx, stat) -> {
                    if (rc == KeeperException.Code.OK.intValue() || rc == KeeperException.Code.NONODE.intValue()) {
                        proven(id, sent);
                    }
                },
                null);
    }

    @Override
    public void stateChanged(CuratorFramework c, ConnectionState newState) {
        switch (newState) {
            case CONNECTED, RECONNECTED -> connected();
            case LOST -> lost();
            default -> {} // SUSPENDED, READ_ONLY: the clock decides, counted from the last reply
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
            if (old != now) {
                clock.reset();
            }
            inDoubt = false;
            sessionGone = false;
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
        heartbeat();
    }

    private void lost() {
        long dead;
        boolean report;
        lock.lock();
        try {
            valid = false;
            sessionGone = true;
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
}
