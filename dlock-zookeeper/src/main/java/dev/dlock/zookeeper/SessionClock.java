package dev.dlock.zookeeper;

import java.util.concurrent.TimeUnit;
import java.util.function.IntSupplier;

/**
 * How long the ZooKeeper server is certain to keep this client's session, counted from the server's
 * last reply.
 *
 * <p>The rule: the server expires a session no earlier than one session timeout after the last request
 * it received from the client. A request that got an answer reached the server after it was sent, so
 * when an answered request was sent at {@code t}, the session lives at least until {@code t + timeout}.
 * This clock keeps the send time of the newest answered request ({@link #proven}) and calls the session
 * live until that point minus a margin (4% of the timeout + 10 ms, for the rates of two clocks and the
 * server's bookkeeping). It never counts from Curator's SUSPENDED event: ZooKeeper raises that only after
 * two thirds of the timeout without a reply, so a grace period started there outlives the session.
 *
 * <p>Proofs come from the tracker's heartbeat (a read every third of the timeout, which replaces the
 * client's own pings: ZooKeeper pings only an idle connection) and from grants (their answer proves the
 * session that owns the new node).
 *
 * <p>Concurrency: updates are synchronized, reads are of volatile fields; any thread may call.
 */
final class SessionClock {
    private final IntSupplier timeoutMs;
    private volatile long provenNanos;
    private volatile boolean everProven;

    /** @param timeoutMs the negotiated session timeout in milliseconds, read at every check */
    SessionClock(IntSupplier timeoutMs) {
        this.timeoutMs = timeoutMs;
    }

    /** An answer arrived to a request sent at {@code sentNanos} in the session this clock follows. */
    synchronized void proven(long sentNanos) {
        if (!everProven || sentNanos - provenNanos > 0) {
            provenNanos = sentNanos;
            everProven = true;
        }
    }

    /** Forgets every proof: the session followed is a new one. */
    synchronized void reset() {
        everProven = false;
    }

    /** Whether any answer was counted since the last {@link #reset()}. */
    boolean everProven() {
        return everProven;
    }

    /** Whether the server is still certain to keep the session. */
    boolean live() {
        return everProven && System.nanoTime() - liveUntilNanos() < 0;
    }

    /** The {@code System.nanoTime()} up to which the session is certainly kept (meaningless unproven). */
    long liveUntilNanos() {
        long timeout = TimeUnit.MILLISECONDS.toNanos(timeoutMs.getAsInt());
        long margin = timeout / 25 + TimeUnit.MILLISECONDS.toNanos(10);
        return provenNanos + timeout - margin;
    }

    /** How often to prove the session: a third of the timeout. */
    long heartbeatNanos() {
        return TimeUnit.MILLISECONDS.toNanos(timeoutMs.getAsInt()) / 3;
    }
}
