package dev.dlock.redis;

import dev.dlock.LockBackendException;
import dev.dlock.LockInfo;
import dev.dlock.spi.AcquireRequest;
import dev.dlock.spi.AcquireResult;
import dev.dlock.spi.DriftMargin;
import dev.dlock.spi.LockBackend;
import dev.dlock.spi.LockKey;
import dev.dlock.spi.Mode;
import dev.dlock.spi.RenewRequest;
import dev.dlock.spi.WakeListener;
import java.time.Duration;
import java.util.ArrayList;
import java.util.Collections;
import java.util.HashSet;
import java.util.List;
import java.util.Map;
import java.util.Set;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.CompletionStage;
import java.util.concurrent.ConcurrentHashMap;
import java.util.concurrent.ThreadLocalRandom;
import java.util.concurrent.TimeUnit;
import java.util.function.Function;

/**
 * Redlock: the SPI primitives over N independent Redis masters (N odd, at least 3), each running the
 * single-server script, so each master enforces exclusion on its own and a grant by a majority excludes
 * every other grant by a majority (two majorities share a master).
 *
 * <p>Acquire: the request goes to every master at once, each bounded by the per-master timeout (a tenth
 * of the lease unless configured, at most a quarter of the operation timeout). Granted once a majority
 * granted; then the fencing token, the maximum of the granting masters' tokens, is written back to a
 * majority (see {@code docs/dlock-redlock.md} for why tokens then strictly increase), and the grant is
 * handed out only if time is left: lease minus the time since the first send (taken before sending)
 * minus the engine's {@link DriftMargin}. The engine's local deadline, computed from its own send
 * time, is earlier still, so it stays the one rule. Otherwise the partial grant is given back at once on
 * every master that granted or may have, and the answer is busy with a jittered retry hint (held back,
 * with the time until enough of them end it, when masters holding grants back after a restart are what
 * kept the majority: {@link AcquireResult#heldBack}); when a majority did not answer, a {@link
 * LockBackendException} lists every master and what it answered.
 *
 * <p>Renewal: one batch per master per tick (the single-server batched renew), valid for the leases a
 * majority confirmed, lost for those a majority can no longer confirm; when neither is certain (masters
 * unreachable) the batch fails and the engine retries until the lease's local deadline.
 *
 * <p>Modes: exclusive and read-write. Fair locks and semaphores are not offered: a fair queue per master
 * is not one queue, and a semaphore counted per master admits more holders than permits.
 *
 * <p>Wake-ups: subscribed on a majority, jittered ({@link RedlockWakes}).
 *
 * <p>Order per master: a follow-up (give-back, leave the queue, the engine's release or cancel) reaches a
 * master only after that master answered, or timed out on, the acquire it follows ({@link Round#after}):
 * Netty keeps the order of commands only per issuing thread, and a round is decided on a Lettuce thread
 * while its request to a slower master may still wait in that master's write queue.
 *
 * <p>Concurrency: no state apart from the masters and the acquire rounds not yet settled; every method
 * only sends requests and returns a stage completed on a Lettuce (or delay-scheduler) thread. Failure
 * modes: every per-master request is bounded by the per-master timeout, so every operation settles well
 * within the operation timeout.
 */
final class RedlockBackend implements LockBackend {
    private static final long MIN_MASTER_TIMEOUT_MILLIS = 10;

    private final List<RedlockMaster> masters;
    private final List<String> names;
    private final int quorum;
    private final long operationTimeoutMillis;
    private final Duration masterTimeout;
    private final Duration minUptime;
    /**
     * Acquire rounds not yet settled, by key and owner, so that a release or "leave the queue" for that
     * owner reaches each master only after the master answered (or timed out on) the acquire
     * ({@link Round#after}); a round leaves the map once every master answered or timed out.
     */
    private final Map<Attempt, Round<AcquireResult>> unsettled = new ConcurrentHashMap<>();

    RedlockBackend(List<RedlockMaster> masters, Duration operationTimeout, Duration masterTimeout, Duration minUptime) {
        this.masters = List.copyOf(masters);
        this.names = masters.stream().map(m -> m.name).toList();
        this.quorum = masters.size() / 2 + 1;
        this.operationTimeoutMillis = operationTimeout.toMillis();
        this.masterTimeout = masterTimeout;
        this.minUptime = minUptime;
    }

    @Override
    public boolean supports(Mode mode) {
        return mode == Mode.EXCLUSIVE || mode == Mode.READ || mode == Mode.WRITE;
    }

    /**
     * Each master steps its counter by {@value RedisBackend#TOKEN_BLOCK} per grant, and a grant's token is
     * written back to a majority before it is handed out, so every later majority grant includes a master
     * whose counter is at least that token and answers at least {@value RedisBackend#TOKEN_BLOCK} above
     * it: the same room as on one server, so the engine may pass a hold between this client's threads.
     */
    @Override
    public long tokenBlock() {
        return RedisBackend.TOKEN_BLOCK;
    }

    /** The per-master timeout of requests made for a lease of {@code leaseMillis}. */
    long masterTimeoutMillis(long leaseMillis) {
        long wanted = masterTimeout != null ? masterTimeout.toMillis() : leaseMillis / 10;
        return Math.max(1, Math.min(Math.max(MIN_MASTER_TIMEOUT_MILLIS, wanted), adminTimeoutMillis()));
    }

    private long adminTimeoutMillis() {
        // An acquire takes at most three steps of one per-master timeout each (votes, token write-back,
        // give-back), which stays within the operation timeout the engine applies to the whole call.
        return Math.max(1, operationTimeoutMillis / 4);
    }

    // ---- acquire

    @Override
    public CompletionStage<AcquireResult> acquire(AcquireRequest request) {
        long start = System.nanoTime();
        long timeout = masterTimeoutMillis(request.leaseMillis());
        Round<AcquireResult> votes = Round.send(
                names,
                quorum,
                timeout,
                AcquireResult::isGranted,
                result -> result.isGranted() ? "granted" : "busy",
                i -> acquireOn(masters.get(i), request));
        Attempt attempt = new Attempt(request.key(), request.owner());
        unsettled.put(attempt, votes);
        votes.settled().whenComplete((all, error) -> unsettled.remove(attempt, votes));
        return votes.decided().thenCompose(outcome -> switch (outcome) {
            case QUORUM -> writeBack(request, votes, start, timeout);
            case SHORT -> {
                long heldBack = heldBackFor(votes);
                AcquireResult busy = heldBack > 0
                        ? AcquireResult.heldBack(heldBack + jitter(timeout))
                        : AcquireResult.busy(retryHint(votes, timeout));
                yield releaseEverywhere(request, votes, timeout).thenApply(released -> busy);
            }
            case UNREACHABLE -> {
                releaseEverywhere(request, votes, timeout);
                // The answers of the masters still on their way complete the message (within their timeout).
                yield votes.settled().thenApply(all -> {
                    throw all.unreachable("acquire '" + request.key().name() + "'");
                });
            }
        });
    }

    /** One master's vote; with the uptime check on, a master up for less than {@code minUptime} is refused. */
    private CompletionStage<AcquireResult> acquireOn(RedlockMaster master, AcquireRequest request) {
        if (minUptime == null) {
            return master.call(backend -> backend.acquire(request));
        }
        CompletionStage<Long> uptime = master.call(RedisBackend::uptimeSeconds);
        CompletionStage<AcquireResult> vote = master.call(backend -> backend.acquire(request));
        return vote.thenCompose(result -> uptime.thenCompose(seconds -> {
            if (TimeUnit.SECONDS.toMillis(seconds) >= minUptime.toMillis()) {
                return CompletableFuture.completedFuture(result);
            }
            // Refused: a grant it made is given back first (see releaseEverywhere on why first).
            CompletionStage<Boolean> undo = result.isGranted()
                    ? master.call(backend -> backend.release(request.key(), request.owner()))
                    : CompletableFuture.completedFuture(false);
            return undo.handle((released, error) -> {
                throw new Round.Refused("up for " + seconds + "s, less than minUptime " + minUptime.toMillis()
                        + "ms: it may have lost holds in a restart");
            });
        }));
    }

    /**
     * Writes the highest token of the granting masters back to a majority, so that every later majority
     * sees it, then hands the grant out if time is left.
     */
    private CompletionStage<AcquireResult> writeBack(
            AcquireRequest request, Round<AcquireResult> votes, long start, long timeout) {
        long token =
                votes.yesValues().stream().mapToLong(AcquireResult::token).max().orElseThrow();
        LockKey key = request.key();
        if (request.waiting()) {
            leaveQueuesWhereNotGranted(request, votes);
        }
        Round<Long> written = Round.send(names, quorum, timeout, i -> {
            AcquireResult vote = votes.value(i);
            if (vote != null && vote.isGranted() && vote.token() == token) {
                return CompletableFuture.completedFuture(1L);
            }
            return masters.get(i).call(backend -> backend.raiseToken(key, request.owner(), token));
        });
        return written.decided().thenCompose(outcome -> {
            if (outcome != Round.Outcome.QUORUM) {
                releaseEverywhere(request, votes, timeout);
                throw written.unreachable("acquire '" + key.name() + "' (granted by " + votes.answers()
                        + "), writing back fencing token " + token);
            }
            long leaseNanos = TimeUnit.MILLISECONDS.toNanos(request.leaseMillis());
            long driftNanos = DriftMargin.nanos(request.leaseMillis());
            if (leaseNanos - (System.nanoTime() - start) - driftNanos <= 0) {
                // Granted, but too late to be of use: nothing of the lease would be left.
                long hint = jitter(timeout);
                return releaseEverywhere(request, votes, timeout).thenApply(released -> AcquireResult.busy(hint));
            }
            return CompletableFuture.completedFuture(AcquireResult.granted(token));
        });
    }

    /**
     * A waiting writer is queued on the masters that answered busy; granted by the others, it leaves
     * those queues at once, or they would hold new readers back there until the entries expire. A master
     * that has not answered yet gets it after its answer or timeout ({@link Round#after}), so that a late
     * busy answer is undone too.
     */
    private void leaveQueuesWhereNotGranted(AcquireRequest request, Round<AcquireResult> votes) {
        for (int i = 0; i < masters.size(); i++) {
            AcquireResult vote = votes.value(i);
            if (vote == null || !vote.isGranted()) {
                RedlockMaster master = masters.get(i);
                votes.after(i, () -> master.call(backend -> backend.cancelWait(request.key(), request.owner())));
            }
        }
    }

    /**
     * Gives a partial grant back on every master that granted or may have granted (all but those that
     * answered busy); completes when each answered or timed out. A busy answer waits for it: the engine
     * retries with the same owner, and a release still queued in the client (not yet written to its
     * connection) could otherwise overtake that retry's grant and remove it, leaving a holder that
     * believes it holds a master it does not.
     */
    private CompletableFuture<?> releaseEverywhere(AcquireRequest request, Round<AcquireResult> votes, long timeout) {
        return Round.send(names, quorum, timeout, i -> {
                    AcquireResult vote = votes.value(i);
                    if (vote != null && !vote.isGranted()) {
                        return CompletableFuture.completedFuture(false);
                    }
                    RedlockMaster master = masters.get(i);
                    return votes.after(
                            i, () -> master.call(backend -> backend.release(request.key(), request.owner())));
                })
                .settled();
    }

    /**
     * How long masters that hold grants back (restarted without their data, {@code epoch.lua}) keep this
     * round from a quorum: 0 when the round would be short without them too (other holders); else until
     * enough of them end their hold-back, with the grants this round had.
     */
    private long heldBackFor(Round<AcquireResult> votes) {
        int granted = 0;
        List<Long> heldBack = new ArrayList<>();
        for (int i = 0; i < votes.size(); i++) {
            AcquireResult vote = votes.value(i);
            if (vote != null && vote.isGranted()) {
                granted++;
            } else if (vote != null && vote.isHeldBack()) {
                heldBack.add(vote.retryAfterMillis());
            }
        }
        int missing = quorum - granted;
        if (missing <= 0 || heldBack.size() < missing) {
            return 0;
        }
        Collections.sort(heldBack);
        return Math.max(1, heldBack.get(missing - 1));
    }

    /** When the first blocking hold of a busy master runs out, plus jitter so that contenders part. */
    private static long retryHint(Round<AcquireResult> votes, long timeout) {
        long earliest = Long.MAX_VALUE;
        for (int i = 0; i < votes.size(); i++) {
            AcquireResult vote = votes.value(i);
            if (vote != null && !vote.isGranted() && vote.retryAfterMillis() >= 0) {
                earliest = Math.min(earliest, vote.retryAfterMillis());
            }
        }
        return (earliest == Long.MAX_VALUE ? 0 : earliest) + jitter(timeout);
    }

    private static long jitter(long timeout) {
        return ThreadLocalRandom.current().nextLong(Math.max(2, timeout / 2) + 1);
    }

    // ---- release, renew, wait

    @Override
    public CompletionStage<Boolean> release(LockKey key, String owner) {
        Round<Boolean> round = Round.send(
                names,
                quorum,
                adminTimeoutMillis(),
                i -> afterAcquire(i, key, owner, backend -> backend.release(key, owner)));
        return round.decided().thenApply(outcome -> {
            if (outcome == Round.Outcome.UNREACHABLE) {
                throw round.unreachable("release '" + key.name() + "'");
            }
            return round.yesValues().contains(Boolean.TRUE);
        });
    }

    /**
     * Sends a request for {@code owner} to master {@code i}, after that master answered (or timed out on)
     * the owner's acquire if that acquire is still on its way there: a release issued right after a grant,
     * on a Lettuce thread, could otherwise reach a slower master first and leave a stray hold there for a
     * whole lease.
     */
    private <T> CompletionStage<T> afterAcquire(
            int i, LockKey key, String owner, Function<RedisBackend, CompletionStage<T>> request) {
        RedlockMaster master = masters.get(i);
        Round<AcquireResult> acquire = unsettled.get(new Attempt(key, owner));
        return acquire == null ? master.call(request) : acquire.after(i, () -> master.call(request));
    }

    /** The key of an acquire round in {@link #unsettled}. */
    private record Attempt(LockKey key, String owner) {}

    @Override
    public CompletionStage<Set<String>> renew(List<RenewRequest> batch) {
        if (batch.isEmpty()) {
            return CompletableFuture.completedFuture(Set.of());
        }
        long shortest =
                batch.stream().mapToLong(RenewRequest::leaseMillis).min().orElseThrow();
        Round<Set<String>> round = Round.send(names, quorum, masterTimeoutMillis(shortest), i -> masters.get(i)
                .call(backend -> backend.renew(batch)));
        return round.settled().thenApply(done -> {
            Set<String> lost = new HashSet<>();
            int undecided = 0;
            for (RenewRequest request : batch) {
                int confirmed = 0;
                int denied = 0;
                for (int i = 0; i < masters.size(); i++) {
                    Set<String> lostThere = round.value(i);
                    if (lostThere != null) {
                        if (lostThere.contains(request.owner())) {
                            denied++;
                        } else {
                            confirmed++;
                        }
                    }
                }
                if (denied > masters.size() - quorum) {
                    lost.add(request.owner());
                } else if (confirmed < quorum) {
                    undecided++;
                }
            }
            if (undecided > 0) {
                throw new LockBackendException("Redlock renew: " + undecided + " of " + batch.size()
                        + " leases could not be confirmed by a majority (" + quorum + " of " + masters.size()
                        + " masters): " + round.answers());
            }
            return lost;
        });
    }

    @Override
    public CompletionStage<Void> cancelWait(LockKey key, String owner) {
        Round<Void> round = Round.send(
                names,
                quorum,
                adminTimeoutMillis(),
                i -> afterAcquire(i, key, owner, backend -> backend.cancelWait(key, owner)));
        return round.decided().thenApply(outcome -> null);
    }

    @Override
    public CompletionStage<Subscription> subscribe(LockKey key, WakeListener listener) {
        return RedlockWakes.subscribe(masters, names, quorum, adminTimeoutMillis(), key, listener);
    }

    // ---- admin

    @Override
    public CompletionStage<LockInfo> describe(LockKey key) {
        Round<LockInfo> round = Round.send(
                names, quorum, adminTimeoutMillis(), i -> masters.get(i).call(backend -> backend.describe(key)));
        return round.settled().thenApply(done -> {
            if (round.failed() >= quorum) {
                throw round.unreachable("describe '" + key.name() + "'");
            }
            return RedlockViews.merge(key.name(), key.kind(), round.yesValues(), quorum, round.failed());
        });
    }

    @Override
    public CompletionStage<List<LockInfo>> list(String namespace, String prefix) {
        Round<List<LockInfo>> round = Round.send(names, quorum, adminTimeoutMillis(), i -> masters.get(i)
                .call(backend -> backend.list(namespace, prefix)));
        return round.settled().thenApply(done -> {
            if (round.failed() >= quorum) {
                throw round.unreachable("list");
            }
            return RedlockViews.mergeAll(round.yesValues(), quorum, round.failed());
        });
    }

    @Override
    public CompletionStage<Duration> heldBack(String namespace) {
        Round<Duration> round = Round.send(
                names, quorum, adminTimeoutMillis(), i -> masters.get(i).call(backend -> backend.heldBack(namespace)));
        return round.settled().thenApply(done -> {
            if (round.failed() >= quorum) {
                throw round.unreachable("ask the hold-back");
            }
            return RedlockViews.heldBack(round.yesValues(), quorum);
        });
    }

    @Override
    public CompletionStage<Boolean> forceRelease(LockKey key) {
        Round<Boolean> round = Round.send(
                names, quorum, adminTimeoutMillis(), i -> masters.get(i).call(backend -> backend.forceRelease(key)));
        return round.settled().thenApply(done -> {
            if (round.failed() >= quorum) {
                throw round.unreachable("force-release '" + key.name() + "'");
            }
            return round.yesValues().contains(Boolean.TRUE);
        });
    }

    @Override
    public void close() {
        masters.forEach(RedlockMaster::close);
    }

    @Override
    public String toString() {
        return "Redlock over " + masters.size() + " masters " + names;
    }
}
