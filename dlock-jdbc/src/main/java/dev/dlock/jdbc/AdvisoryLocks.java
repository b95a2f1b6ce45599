package dev.dlock.jdbc;

import dev.dlock.LockBackendException;
import dev.dlock.spi.AcquireRequest;
import dev.dlock.spi.AcquireResult;
import dev.dlock.spi.LockKey;
import dev.dlock.spi.RenewRequest;
import java.nio.ByteBuffer;
import java.sql.Connection;
import java.sql.PreparedStatement;
import java.sql.ResultSet;
import java.sql.SQLException;
import java.sql.Statement;
import java.util.HashMap;
import java.util.HashSet;
import java.util.HexFormat;
import java.util.List;
import java.util.Map;
import java.util.Set;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.ExecutorService;
import java.util.concurrent.Executors;
import java.util.concurrent.TimeUnit;

/**
 * The advisory flavour of exclusive locks: {@code pg_try_advisory_lock} on PostgreSQL, {@code
 * GET_LOCK(name, 0)} on MySQL/MariaDB, held by one dedicated session per backend. Fencing tokens still
 * come from the lease table ({@link LeaseTable#nextToken}), incremented right after the lock is taken on
 * the same session, so they stay durable and increasing.
 *
 * <p>Semantics differ from the lease table: a hold lasts as long as the session, not a lease time.
 * Renewal only checks that the session is alive. When the session dies (server restart, failover,
 * {@code pg_terminate_backend}, {@code KILL}, network), the database drops every advisory lock at once, so
 * the next renewal tick reports every advisory lease of the backend lost (their lost signals fire; leases
 * of other kinds, which live in the lease table, are unaffected), and the next call opens a new session.
 * Advisory locks live only on the server that granted them: they vanish on failover to a replica.
 *
 * <p>Concurrency: one thread ({@code dlock-advisory-N}) owns the session and runs every call in order.
 * Advisory locks are re-entrant per session, so a map of lock id to owner keeps two acquisitions of one
 * client from both "winning" the same lock.
 *
 * <p>Failure modes: a failed call fails its future with {@link LockBackendException}; an acquire that
 * finds its session dead retries once on a new session. Between the session's death and the next renewal
 * tick (a third of the lease time) a lost advisory lease still looks valid locally.
 */
final class AdvisoryLocks {
    private final LeaseTable table;
    private final PgNotifier.ConnectionSource source;
    private final ExecutorService thread;
    private final Map<String, String> ownerByLock = new HashMap<>(); // only on the thread
    private final Backoff backoff = new Backoff();
    private Connection session; // only on the thread

    AdvisoryLocks(LeaseTable table, PgNotifier.ConnectionSource source, String threadName) {
        if (table.dialect() == Dialect.H2) {
            throw new IllegalArgumentException("the advisory flavour needs PostgreSQL or MySQL/MariaDB, not H2");
        }
        this.table = table;
        this.source = source;
        this.thread = Executors.newSingleThreadExecutor(r -> {
            Thread t = new Thread(r, threadName);
            t.setDaemon(true);
            return t;
        });
    }

    /** PostgreSQL: a 64-bit key; MySQL: a name of at most 64 characters. Both from the resource's hash. */
    private String lockId(LockKey key) {
        byte[] hash = LeaseTable.sha256(table.prefix() + '\n' + key.namespace() + '\n' + key.name());
        if (table.dialect() == Dialect.POSTGRESQL) {
            return Long.toString(ByteBuffer.wrap(hash).getLong());
        }
        return "dlock:" + HexFormat.of().formatHex(hash).substring(0, 58);
    }

    private interface SessionCall<T> {
        T run(Connection c) throws SQLException;
    }

    private <T> CompletableFuture<T> onSession(String what, SessionCall<T> call) {
        return onSession(what, call, false);
    }

    /**
     * Runs a call on the session's thread. With {@code retryOnNewSession}, a call that fails because the
     * session died is run once more on a new session (safe for acquire: the dead session held nothing
     * that the new one could be mistaken for).
     */
    private <T> CompletableFuture<T> onSession(String what, SessionCall<T> call, boolean retryOnNewSession) {
        try {
            return CompletableFuture.supplyAsync(
                    () -> {
                        for (int attempt = 1; ; attempt++) {
                            try {
                                if (session == null) {
                                    session = source.open();
                                }
                                return call.run(session);
                            } catch (SQLException e) {
                                boolean broken = sessionBroken();
                                if (broken) {
                                    dropSession();
                                }
                                if (!broken || !retryOnNewSession || attempt > 1) {
                                    throw new LockBackendException(what + " failed: " + e.getMessage(), e);
                                }
                            }
                        }
                    },
                    thread);
        } catch (java.util.concurrent.RejectedExecutionException e) {
            return CompletableFuture.failedFuture(new LockBackendException(what + ": the backend is closed", e));
        }
    }

    private boolean sessionBroken() {
        try {
            return session != null && !session.isValid(1);
        } catch (SQLException e) {
            return true;
        }
    }

    /** Forgets a dead session and the locks it held; their leases are reported lost at renewal. */
    private void dropSession() {
        ownerByLock.clear();
        try {
            if (session != null) {
                session.close();
            }
        } catch (SQLException ignored) {
            // Broken already.
        }
        session = null;
    }

    CompletableFuture<AcquireResult> acquire(AcquireRequest request) {
        String id = lockId(request.key());
        return onSession(
                "advisory acquire '" + request.key().name() + "'",
                c -> {
                    String holder = ownerByLock.get(id);
                    if (holder != null) {
                        return holder.equals(request.owner())
                                ? AcquireResult.granted(table.nextToken(c, request.key()))
                                : AcquireResult.busy(backoff.next(request.owner(), -1));
                    }
                    if (!tryLock(c, id)) {
                        return AcquireResult.busy(backoff.next(request.owner(), -1));
                    }
                    ownerByLock.put(id, request.owner());
                    backoff.forget(request.owner());
                    try {
                        return AcquireResult.granted(table.nextToken(c, request.key()));
                    } catch (SQLException e) {
                        ownerByLock.remove(id);
                        unlock(c, id, request.key());
                        throw e;
                    }
                },
                true);
    }

    private boolean tryLock(Connection c, String id) throws SQLException {
        boolean pg = table.dialect() == Dialect.POSTGRESQL;
        try (PreparedStatement ps =
                c.prepareStatement(pg ? "SELECT pg_try_advisory_lock(?)" : "SELECT GET_LOCK(?, 0)")) {
            if (pg) {
                ps.setLong(1, Long.parseLong(id));
            } else {
                ps.setString(1, id);
            }
            try (ResultSet rs = ps.executeQuery()) {
                rs.next();
                return pg ? rs.getBoolean(1) : rs.getInt(1) == 1;
            }
        }
    }

    private void unlock(Connection c, String id, LockKey key) throws SQLException {
        boolean pg = table.dialect() == Dialect.POSTGRESQL;
        // PostgreSQL: the waiters of other clients are woken in the same statement.
        try (PreparedStatement ps =
                c.prepareStatement(pg ? "SELECT pg_advisory_unlock(?), pg_notify(?, '')" : "SELECT RELEASE_LOCK(?)")) {
            if (pg) {
                ps.setLong(1, Long.parseLong(id));
                ps.setString(2, table.channel(key));
            } else {
                ps.setString(1, id);
            }
            ps.executeQuery().close();
        }
    }

    CompletableFuture<Boolean> release(LockKey key, String owner) {
        String id = lockId(key);
        return onSession("advisory release '" + key.name() + "'", c -> {
            if (!owner.equals(ownerByLock.get(id))) {
                return false;
            }
            ownerByLock.remove(id);
            unlock(c, id, key);
            return true;
        });
    }

    /** The session is the lease: one liveness query per tick; if it fails, every hold is lost. */
    CompletableFuture<Set<String>> renew(List<RenewRequest> batch) {
        return onSession("advisory renew", c -> {
            try (Statement st = c.createStatement()) {
                st.executeQuery("SELECT 1").close();
            } catch (SQLException e) {
                if (!sessionBroken()) {
                    throw e;
                }
                // The database dropped every advisory lock with the session.
                dropSession();
                Set<String> lost = new HashSet<>();
                batch.forEach(r -> lost.add(r.owner()));
                return lost;
            }
            Set<String> lost = new HashSet<>();
            for (RenewRequest r : batch) {
                if (!r.owner().equals(ownerByLock.get(lockId(r.key())))) {
                    lost.add(r.owner());
                }
            }
            return lost;
        });
    }

    void close(long waitMillis) {
        thread.execute(() -> {
            try {
                if (session != null) {
                    session.close(); // ends the session: the database drops its advisory locks
                }
            } catch (SQLException ignored) {
                // Broken already.
            }
            session = null;
        });
        thread.shutdown();
        try {
            if (!thread.awaitTermination(waitMillis, TimeUnit.MILLISECONDS)) {
                thread.shutdownNow();
            }
        } catch (InterruptedException e) {
            thread.shutdownNow();
            Thread.currentThread().interrupt();
        }
    }
}
