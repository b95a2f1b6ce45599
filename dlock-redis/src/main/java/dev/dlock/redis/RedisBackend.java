package dev.dlock.redis;

import dev.dlock.LockInfo;
import dev.dlock.spi.AcquireRequest;
import dev.dlock.spi.AcquireResult;
import dev.dlock.spi.BackendContext;
import dev.dlock.spi.LockBackend;
import dev.dlock.spi.LockKey;
import dev.dlock.spi.Mode;
import dev.dlock.spi.RenewRequest;
import dev.dlock.spi.WakeListener;
import io.lettuce.core.ScriptOutputType;
import java.time.Duration;
import java.time.Instant;
import java.util.ArrayList;
import java.util.List;
import java.util.Set;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.CompletionStage;
import java.util.concurrent.atomic.AtomicLong;

/**
 * The SPI primitives on Redis: each one is a single script call (EVALSHA), so an uncontended acquire and
 * a release cost one round trip each. Exclusive locks (kind {@code lock}) run {@code exclusive.lua}, a
 * string key per lock with a server-side expiry and a wake-up published only when someone waits; every
 * other mode runs {@code dlock.lua}. The two share the key layout (see {@link ResourceKeys}). This class
 * builds the calls; batched renewal is {@link Renewals}, the read-only views {@link Inspection}, the
 * script fallback {@link LuaScript}.
 *
 * <p>Hold-back after a lost state (on by default): every grant first runs {@code epoch.lua}'s check in
 * the same script (see {@link HoldBack}), against the namespace's marker (in a Cluster the marker of the
 * namespace in the resource's hash slot); a held-back answer is busy with the time left, so waiters wait
 * and {@code tryLock()} answers false, and is logged once per hold-back.
 *
 * <p>Replica acknowledgements (on by default for Sentinel, optional for standalone): grants and renewals
 * go through {@link ReplicaAcks} ({@code WAIT} after each); too few acknowledgements fail the operation
 * (a grant is given back first).
 *
 * <p>Concurrency: stateless apart from the connections and the wake-up table, which are thread-safe.
 * Every method only sends commands and returns a stage completed on a Lettuce thread.
 *
 * <p>Failure modes: a dead or unreachable server fails stages quickly (commands are rejected while
 * disconnected, and time out after the operation timeout); Lettuce reconnects by itself, so the same
 * backend works again once the server is back. Lock commands are never replayed after a reconnect.
 */
final class RedisBackend implements LockBackend {
    /**
     * Tokens each grant reserves, the one definition: sent to the scripts with every acquire ({@code
     * tokens.lua} checks it), and the engine's {@link #tokenBlock()}.
     */
    static final long TOKEN_BLOCK = 16;

    private static final String TOKEN_BLOCK_ARG = Long.toString(TOKEN_BLOCK);

    private static final System.Logger LOG = System.getLogger(RedisBackend.class.getName());

    private final Connections connections;
    private final WakeChannels wakes;
    private final Duration closeTimeout;
    /** The replica-acknowledgement path, or null when off. */
    private final ReplicaAcks replicaAcks;

    private final Renewals renewals;
    private final Inspection inspection;
    private final HoldBack holdBack;
    /** {@link HoldBack#scriptArgs()}, sent with every acquire: made once. */
    private final List<String> holdBackArgs;

    private final String server;
    /** Until when (wall clock, ms) the current hold-back has been logged; one line per hold-back. */
    private final AtomicLong holdBackLoggedUntil = new AtomicLong();

    /**
     * A backend over open connections; {@code replicaAcks} is null when acknowledgements are off; renewal
     * answers report the server's clock to {@code events} under the name {@code server} without its
     * options (outside a Cluster).
     */
    RedisBackend(
            Connections connections,
            Duration operationTimeout,
            ReplicaAcks replicaAcks,
            HoldBack holdBack,
            String server,
            BackendContext.BackendEvents events) {
        this.connections = connections;
        this.wakes = new WakeChannels(connections.pubSub());
        this.closeTimeout = operationTimeout;
        this.replicaAcks = replicaAcks;
        this.renewals = new Renewals(
                connections,
                replicaAcks != null
                        ? replicaAcks::renew
                        : (script, routing, args) -> script.run(
                                connections.commands(), connections.library(), ScriptOutputType.MULTI, routing, args),
                server.indexOf('?') < 0
                        ? server
                        : server.substring(0, server.indexOf('?')), // the URI's options are no clock
                events);
        this.inspection = new Inspection(connections, holdBack);
        this.holdBack = holdBack;
        this.holdBackArgs = holdBack.scriptArgs();
        this.server = server;
    }

    private static String letter(Mode mode) {
        return switch (mode) {
            case EXCLUSIVE -> "E";
            case FAIR -> "F";
            case READ -> "R";
            case WRITE -> "W";
            case PERMIT -> "P";
        };
    }

    private <T> CompletableFuture<T> run(LuaScript script, ScriptOutputType type, String[] keys, String... args) {
        return script.run(connections.commands(), connections.library(), type, keys, args);
    }

    @Override
    public CompletionStage<AcquireResult> acquire(AcquireRequest request) {
        LockKey key = request.key();
        try {
            holdBack.check(key.name(), request.leaseMillis());
        } catch (IllegalArgumentException e) {
            return CompletableFuture.failedFuture(e);
        }
        ResourceKeys keys = ResourceKeys.of(key);
        LuaScript script = LuaScript.forKind(key.kind());
        List<String> keyNames;
        List<String> args;
        if (script == LuaScript.EXCLUSIVE) {
            keyNames = new ArrayList<>(List.of(keys.exclusiveAcquire()));
            args = new ArrayList<>(List.of(
                    "acquire",
                    request.owner(),
                    Long.toString(request.leaseMillis()),
                    Long.toString(request.queueMillis()),
                    key.name(),
                    TOKEN_BLOCK_ARG));
        } else {
            keyNames = new ArrayList<>(List.of(keys.withTokens()));
            args = new ArrayList<>(List.of(
                    "acquire",
                    request.owner(),
                    letter(key.mode()),
                    Long.toString(request.leaseMillis()),
                    Integer.toString(request.permits()),
                    Long.toString(request.queueMillis()),
                    request.downgradeFrom() == null ? "" : request.downgradeFrom(),
                    key.name(),
                    TOKEN_BLOCK_ARG));
        }
        if (holdBack.on()) {
            keyNames.add(keys.epoch(connections.isCluster()));
            args.addAll(holdBackArgs);
        }
        String[] keyArray = keyNames.toArray(String[]::new);
        String[] argArray = args.toArray(String[]::new);
        CompletableFuture<Long> reply = replicaAcks != null
                ? replicaAcks.acquire(
                        script, keyArray, argArray, key.name(), () -> release(request.key(), request.owner()))
                : run(script, ScriptOutputType.INTEGER, keyArray, argArray);
        return reply.thenApply(r -> acquireResult(key, r));
    }

    private AcquireResult acquireResult(LockKey key, long reply) {
        if (reply > 0) {
            return AcquireResult.granted(reply);
        }
        if (reply <= -HoldBack.HELD_BACK) {
            long left = -reply - 1 - HoldBack.HELD_BACK;
            logHoldBack(key, left);
            return AcquireResult.heldBack(left);
        }
        return AcquireResult.busy(reply == 0 ? -1 : -reply - 1);
    }

    /** Logs a hold-back once: again only for a hold-back seen a second after the logged one ended. */
    private void logHoldBack(LockKey key, long leftMillis) {
        long now = System.currentTimeMillis();
        long logged = holdBackLoggedUntil.get();
        if (now < logged + 1_000 || !holdBackLoggedUntil.compareAndSet(logged, now + leftMillis)) {
            return;
        }
        LOG.log(
                System.Logger.Level.WARNING,
                "Redis at {0} holds grants in namespace ''{1}'' back until {2} ({3} ms from now): it may have lost"
                        + " holds whose leases are still valid (restarted without persistence or from a file that"
                        + " misses the last writes, a failover, or this namespace''s first grant on a server up for"
                        + " less than maxLease {4} ms). Waiters wait; tryLock() answers false until then.",
                server,
                key.namespace(),
                Instant.ofEpochMilli(now + leftMillis),
                leftMillis,
                holdBack.maxLease().toMillis());
    }

    @Override
    public CompletionStage<Boolean> release(LockKey key, String owner) {
        ResourceKeys keys = ResourceKeys.of(key);
        CompletableFuture<Long> reply = key.mode() == Mode.EXCLUSIVE
                ? run(
                        LuaScript.EXCLUSIVE,
                        ScriptOutputType.INTEGER,
                        keys.exclusiveRelease(),
                        "release",
                        owner,
                        keys.channel())
                : run(
                        LuaScript.DLOCK,
                        ScriptOutputType.INTEGER,
                        keys.resource(),
                        "release",
                        owner,
                        letter(key.mode()),
                        keys.channel());
        return reply.thenApply(released -> released == 1L);
    }

    @Override
    public CompletionStage<Set<String>> renew(List<RenewRequest> batch) {
        // An extend past the declared maximum would outlast the hold-back after a restart, as a grant would.
        for (RenewRequest request : batch) {
            try {
                holdBack.check(request.key().name(), request.leaseMillis());
            } catch (IllegalArgumentException e) {
                return CompletableFuture.failedFuture(e);
            }
        }
        return renewals.renew(batch);
    }

    @Override
    public CompletionStage<Void> cancelWait(LockKey key, String owner) {
        if (!key.mode().queuesWhileWaiting()) {
            return CompletableFuture.completedFuture(null);
        }
        ResourceKeys keys = ResourceKeys.of(key);
        return this.<Long>run(
                        LuaScript.DLOCK,
                        ScriptOutputType.INTEGER,
                        keys.resource(),
                        "cancel",
                        owner,
                        letter(key.mode()),
                        keys.channel())
                .thenApply(removed -> null);
    }

    @Override
    public CompletionStage<Subscription> subscribe(LockKey key, WakeListener listener) {
        return wakes.subscribe(ResourceKeys.of(key).channel(), listener);
    }

    /**
     * Both scripts step the token counter by {@value #TOKEN_BLOCK} per grant (sent with every acquire), so
     * the engine may hand a hold to this client's own waiting threads with the tokens in between. Kept
     * small so that the counter stays behind the server clock in microseconds, which is what keeps tokens
     * increasing where the counter is lost (see {@code tokens.lua}).
     */
    @Override
    public long tokenBlock() {
        return TOKEN_BLOCK;
    }

    @Override
    public CompletionStage<LockInfo> describe(LockKey key) {
        return inspection.describe(ResourceKeys.of(key), key.name());
    }

    @Override
    public CompletionStage<List<LockInfo>> list(String namespace, String prefix) {
        return inspection.list(namespace, prefix);
    }

    @Override
    public CompletionStage<Duration> heldBack(String namespace) {
        return inspection.heldBack(namespace);
    }

    @Override
    public CompletionStage<Boolean> forceRelease(LockKey key) {
        ResourceKeys keys = ResourceKeys.of(key);
        LuaScript script = LuaScript.forKind(key.kind());
        String[] keyNames = script == LuaScript.EXCLUSIVE ? keys.exclusiveRelease() : keys.resource();
        return this.<Long>run(script, ScriptOutputType.INTEGER, keyNames, "force", keys.channel())
                .thenApply(removed -> removed == 1L);
    }

    /**
     * Redlock's write-back: raises the resource's token counter to at least {@code token} and, where
     * {@code owner} holds, records {@code token} as its hold's token.
     */
    CompletableFuture<Long> raiseToken(LockKey key, String owner, long token) {
        ResourceKeys keys = ResourceKeys.of(key);
        return run(
                LuaScript.forKind(key.kind()),
                ScriptOutputType.INTEGER,
                new String[] {keys.holders(), keys.tokens()},
                "floor",
                owner,
                Long.toString(token));
    }

    /** The server's uptime in seconds ({@code INFO server}). */
    CompletableFuture<Long> uptimeSeconds() {
        return connections.commands().info("server").toCompletableFuture().thenApply(info -> {
            for (String line : info.split("\r?\n")) {
                if (line.startsWith("uptime_in_seconds:")) {
                    return Long.parseLong(
                            line.substring("uptime_in_seconds:".length()).strip());
                }
            }
            throw new IllegalStateException("INFO server has no uptime_in_seconds");
        });
    }

    @Override
    public void close() {
        connections.close(closeTimeout);
    }
}
