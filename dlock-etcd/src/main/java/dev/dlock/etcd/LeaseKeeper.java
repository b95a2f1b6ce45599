package dev.dlock.etcd;

import dev.dlock.spi.DriftMargin;
import dev.dlock.spi.SessionLeases;
import io.etcd.jetcd.Lease;
import io.etcd.jetcd.lease.LeaseKeepAliveResponse;
import java.util.Set;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.ConcurrentHashMap;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.atomic.AtomicInteger;
import java.util.concurrent.locks.ReentrantLock;

/**
 * The etcd lease of one client: every key the client writes is attached to it, so keep-alive costs one
 * request per tick whatever the number of locks.
 *
 * <p>Keep-alive: {@link #keepAlive} sends one {@code LeaseKeepAlive} and is called by the engine's
 * watchdog through {@code renew}, and by an acquisition when the lease is older than a third of its TTL
 * (so that a client that only waits keeps its queue keys). There is no background keep-alive stream: a
 * client that stops renewing (a paused or dead process) loses its keys after the TTL, as it should. Each
 * keep-alive first tells the listener ({@link Listener#keepingAlive}), which sends again the unconfirmed
 * deletes of ended keys on the lease: such a key can outlive its lost delete only while keep-alives go on.
 *
 * <p>Validity, and the one clock: a lease is trusted until the send time of its last answered keep-alive
 * (or grant) plus the TTL the server answered, minus a {@link DriftMargin}. This keeper runs no timer of its own: as
 * the client's {@link SessionLeases} it reports the earliest such point of the leases that carry a hold
 * ({@link #liveUntilNanos}), and the engine's watchdog, the only clock that decides a lease's deadline,
 * marks every hold lost when that point passes without moving on. A keep-alive answered with TTL 0 or "lease
 * not found" (revoked or expired on the server) ends the lease at once; so does any use of a lease past its
 * point ({@link #fresh}, {@link #keepAlive}, {@link #leaseFor} sweeping stale leases). {@link
 * Listener#leaseEnded} then tells the backend, which marks every hold on it lost. An ended lease is revoked
 * (best effort) and a new one is granted for the next acquisition.
 *
 * <p>TTL: the first lease gets the lease time of the first acquisition, rounded up to whole seconds (the
 * server may raise it to its minimum). An acquisition or renewal asking for a longer lease time gets a new,
 * longer lease that becomes the current one; keys on an older lease stay on it while they live.
 *
 * <p>Concurrency: lease fields are volatile; granting is deduplicated under a lock never held across a
 * store call.
 */
final class LeaseKeeper implements SessionLeases {
    /** What {@link #liveUntilNanos} adds to now when no lease carries a hold: nothing can be lost. */
    private static final long NO_HOLDS_NANOS = TimeUnit.DAYS.toNanos(365);

    /** Told when a lease can no longer be trusted. Called on a jetcd or caller thread; must not block. */
    interface Listener {
        void leaseEnded(EtcdLease lease, String reason);

        /** A keep-alive of the lease is about to be sent: whatever must not outlive the lease's keys acts now. */
        void keepingAlive(EtcdLease lease);
    }

    /** One etcd lease and what this client knows of it. */
    static final class EtcdLease {
        final long id;
        final long ttlMillis;
        /** Keys on this lease that hold a lock, so that {@link #leasesValid()} only judges leases in use. */
        final AtomicInteger holds = new AtomicInteger();

        volatile long refreshedAtNanos;
        volatile long validUntilNanos;
        volatile boolean ended;

        EtcdLease(long id, long ttlMillis, long sentNanos) {
            this.id = id;
            this.ttlMillis = ttlMillis;
            answered(sentNanos);
        }

        void answered(long sentNanos) {
            refreshedAtNanos = sentNanos;
            validUntilNanos = sentNanos + TimeUnit.MILLISECONDS.toNanos(ttlMillis) - DriftMargin.nanos(ttlMillis);
        }

        boolean valid(long now) {
            return !ended && now - validUntilNanos < 0;
        }

        @Override
        public String toString() {
            return "lease " + Long.toHexString(id) + " (TTL " + ttlMillis + " ms)";
        }
    }

    private final Lease leases;
    private final Calls calls;
    private final Listener listener;
    private final Set<EtcdLease> live = ConcurrentHashMap.newKeySet();
    private final ReentrantLock lock = new ReentrantLock();
    private EtcdLease current;
    private CompletableFuture<EtcdLease> granting;
    private long grantingTtlMillis;

    LeaseKeeper(Lease leases, Calls calls, Listener listener) {
        this.leases = leases;
        this.calls = calls;
        this.listener = listener;
    }

    /** A live lease of at least {@code leaseMillis}, refreshed if it is older than a third of its TTL. */
    CompletableFuture<EtcdLease> leaseFor(long leaseMillis) {
        endStale();
        EtcdLease lease;
        lock.lock();
        try {
            lease = current;
            if (lease == null || lease.ended || lease.ttlMillis < leaseMillis) {
                return grant(Math.max(leaseMillis, lease == null || lease.ended ? 0 : lease.ttlMillis));
            }
        } finally {
            lock.unlock();
        }
        // An ended lease is no longer current, so the second call grants a new one.
        return fresh(lease)
                .thenCompose(live -> live != null ? CompletableFuture.completedFuture(live) : leaseFor(leaseMillis));
    }

    /**
     * The lease once it is answered within the last third of its TTL, or null when it ended (expired,
     * revoked, or unanswered for its TTL).
     */
    CompletableFuture<EtcdLease> fresh(EtcdLease lease) {
        if (!lease.valid(System.nanoTime())) {
            end(lease, unanswered(lease));
            return CompletableFuture.completedFuture(null);
        }
        if (System.nanoTime() - lease.refreshedAtNanos < TimeUnit.MILLISECONDS.toNanos(lease.ttlMillis) / 3) {
            return CompletableFuture.completedFuture(lease);
        }
        return keepAlive(lease).thenApply(alive -> alive ? lease : null);
    }

    /** Milliseconds until the lease wants a keep-alive: the longest a waiter should sleep. */
    static long refreshInMillis(EtcdLease lease) {
        long due = lease.refreshedAtNanos + TimeUnit.MILLISECONDS.toNanos(lease.ttlMillis) / 3;
        return Math.max(0, TimeUnit.NANOSECONDS.toMillis(due - System.nanoTime()));
    }

    private CompletableFuture<EtcdLease> grant(long leaseMillis) {
        // Called under the lock.
        if (granting != null && grantingTtlMillis >= leaseMillis) {
            return granting;
        }
        long ttlSeconds = Math.max(1, (leaseMillis + 999) / 1000);
        long sent = System.nanoTime();
        CompletableFuture<EtcdLease> grant = calls.bounded(leases.grant(ttlSeconds))
                .thenApply(answer -> {
                    EtcdLease lease = new EtcdLease(answer.getID(), answer.getTTL() * 1000, sent);
                    live.add(lease);
                    lock.lock();
                    try {
                        if (current == null || current.ended || current.ttlMillis <= lease.ttlMillis) {
                            current = lease;
                        }
                    } finally {
                        lock.unlock();
                    }
                    return lease;
                });
        granting = grant;
        grantingTtlMillis = ttlSeconds * 1000;
        grant.whenComplete((lease, error) -> {
            lock.lock();
            try {
                if (granting == grant) {
                    granting = null;
                }
            } finally {
                lock.unlock();
            }
        });
        return grant;
    }

    /**
     * Sends one keep-alive. Completes with false when the server no longer has the lease (the lease is
     * then ended); exceptionally when the server did not answer.
     */
    CompletableFuture<Boolean> keepAlive(EtcdLease lease) {
        if (lease.ended) {
            return CompletableFuture.completedFuture(false);
        }
        listener.keepingAlive(lease);
        long sent = System.nanoTime();
        return calls.bounded(leases.keepAliveOnce(lease.id))
                .handle((LeaseKeepAliveResponse answer, Throwable error) -> {
                    if (error != null) {
                        if (Calls.leaseNotFound(error)) {
                            end(lease, "the etcd " + lease + " was not found on the server (expired or revoked)");
                            return false;
                        }
                        throw Calls.asCompletion(error);
                    }
                    if (answer.getTTL() <= 0) {
                        end(lease, "the etcd " + lease + " expired or was revoked on the server");
                        return false;
                    }
                    if (!lease.valid(System.nanoTime())) {
                        // Its local deadline passed before this answer: its holders may already act on the loss.
                        end(lease, unanswered(lease));
                        return false;
                    }
                    if (sent - lease.refreshedAtNanos > 0) {
                        lease.answered(sent);
                    }
                    return true;
                });
    }

    /** Ends every lease past its local deadline: its keys may be gone from the server already. */
    void endStale() {
        long now = System.nanoTime();
        for (EtcdLease lease : live) {
            if (!lease.valid(now)) {
                end(lease, unanswered(lease));
            }
        }
    }

    private static String unanswered(EtcdLease lease) {
        return "no keep-alive of the etcd " + lease + " was answered before its local deadline (its TTL)";
    }

    /** Gives a lease up: it is no longer trusted, its holders are told, and it is revoked if reachable. */
    void end(EtcdLease lease, String reason) {
        lock.lock();
        try {
            if (lease.ended) {
                return;
            }
            lease.ended = true;
            if (current == lease) {
                current = null;
            }
        } finally {
            lock.unlock();
        }
        live.remove(lease);
        listener.leaseEnded(lease, reason);
        revokeQuietly(lease);
    }

    private void revokeQuietly(EtcdLease lease) {
        calls.bounded(leases.revoke(lease.id)).exceptionally(error -> null);
    }

    /**
     * The earliest local deadline of the leases that carry a hold: past it, the server may have deleted
     * those holds' keys. Never blocks (the watchdog calls it at every tick).
     */
    @Override
    public long liveUntilNanos() {
        long now = System.nanoTime();
        long until = now + NO_HOLDS_NANOS;
        for (EtcdLease lease : live) {
            if (lease.holds.get() > 0) {
                long leaseUntil = lease.ended ? now : lease.validUntilNanos;
                if (leaseUntil - until < 0) {
                    until = leaseUntil;
                }
            }
        }
        return until;
    }

    @Override
    public String notLiveReason() {
        long now = System.nanoTime();
        for (EtcdLease lease : live) {
            if (lease.holds.get() > 0 && !lease.valid(now)) {
                return unanswered(lease);
            }
        }
        return "the etcd lease of this client is no longer trusted";
    }

    /** Whether every lease that carries a hold is still trusted. Never blocks. */
    boolean leasesValid() {
        return liveUntilNanos() - System.nanoTime() > 0;
    }

    /** Revokes every lease (deleting the client's keys), waiting at most the operation timeout. */
    void revokeAll() {
        CompletableFuture<?>[] revokes = live.stream()
                .map(lease -> {
                    lease.ended = true;
                    return calls.bounded(leases.revoke(lease.id)).exceptionally(error -> null);
                })
                .toArray(CompletableFuture[]::new);
        live.clear();
        try {
            CompletableFuture.allOf(revokes).join();
        } catch (RuntimeException ignored) {
            // bounded and best effort: the leases expire on their own
        }
    }
}
