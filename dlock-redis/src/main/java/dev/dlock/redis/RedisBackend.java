package dev.dlock.redis;

import dev.dlock.LockBackendException;
import dev.dlock.LockInfo;
import dev.dlock.spi.AcquireRequest;
import dev.dlock.spi.AcquireResult;
import dev.dlock.spi.LockBackend;
import dev.dlock.spi.LockKey;
import dev.dlock.spi.Mode;
import dev.dlock.spi.RenewRequest;
import dev.dlock.spi.WakeListener;
import io.lettuce.core.KeyScanCursor;
import io.lettuce.core.ScanArgs;
import io.lettuce.core.ScanCursor;
import io.lettuce.core.ScriptOutputType;
import io.lettuce.core.api.async.RedisAsyncCommands;
import java.time.Duration;
import java.util.ArrayList;
import java.util.Collection;
import java.util.HashSet;
import java.util.List;
import java.util.Set;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.CompletionStage;

/**
 * The SPI primitives on Redis: each one is a single script call (EVALSHA), so an uncontended acquire and
 * a release cost one round trip each. Exclusive locks (kind {@code lock}) run {@code exclusive.lua}, a
 * string key per lock with a server-side expiry and a wake-up published only when someone waits; every
 * other mode runs {@code dlock.lua}. The two share the key layout (see {@link ResourceKeys}).
 *
 * <p>Renewal: the leases of a batch are split by script, then grouped by the node that serves them (one
 * group on standalone and Sentinel) and each group of up to {@value #RENEW_CHUNK} leases is renewed by one script call. In a
 * Cluster the call is routed by the group's first key and touches the other keys of its node without
 * declaring them (allowed for scripts without flags); if the slot map changed under it, the group is
 * retried slot by slot with a fresh routing.
 *
 * <p>Replica acknowledgements (optional): grants and renewals go over a dedicated connection and are
 * each followed by {@code WAIT n timeout}, pipelined right behind it on that connection so that it covers
 * the script's writes; too few acknowledgements fail the operation (a grant is released first).
 *
 * <p>Concurrency: stateless apart from the connections and the wake-up table, which are thread-safe.
 * Every method only sends commands and returns a stage completed on a Lettuce thread.
 *
 * <p>Failure modes: a dead or unreachable server fails stages quickly (commands are rejected while
 * disconnected, and time out after the operation timeout); Lettuce reconnects by itself, so the same
 * backend works again once the server is back. Lock commands are never replayed after a reconnect.
 */
final class RedisBackend implements LockBackend {
    /** Tokens each grant reserves; must equal {@code TOKEN_BLOCK} in exclusive.lua and dlock.lua. */
    static final long TOKEN_BLOCK = 16;

    static final int RENEW_CHUNK = 1_000;

    private final Connections connections;
    private final WakeChannels wakes;
    private final Duration closeTimeout;
    private final int replicaAcks;
    private final long replicaAckMillis;

    RedisBackend(Connections connections, Duration operationTimeout, int replicaAcks, Duration replicaAckTimeout) {
        this.connections = connections;
        this.wakes = new WakeChannels(connections.pubSub());
        this.closeTimeout = operationTimeout;
        this.replicaAcks = replicaAcks;
        this.replicaAckMillis = replicaAckTimeout == null ? 0 : replicaAckTimeout.toMillis();
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

    private static String modeName(char letter) {
        return switch (letter) {
            case 'E' -> "exclusive";
            case 'F' -> "fair";
            case 'R' -> "read";
            case 'W' -> "write";
            case 'P' -> "permit";
            default -> "unknown";
        };
    }

    private <T> CompletableFuture<T> run(LuaScript script, ScriptOutputType type, String[] keys, String... args) {
        return script.run(connections.commands(), type, keys, args);
    }

    @Override
    public CompletionStage<AcquireResult> acquire(AcquireRequest request) {
        LockKey key = request.key();
        ResourceKeys keys = ResourceKeys.of(key);
        LuaScript script = LuaScript.forKind(key.kind());
        String[] keyNames;
        String[] args;
        if (script == LuaScript.EXCLUSIVE) {
            keyNames = keys.exclusiveAcquire();
            args = new String[] {
                "acquire",
                request.owner(),
                Long.toString(request.leaseMillis()),
                Long.toString(request.queueMillis()),
                key.name()
            };
        } else {
            keyNames = keys.withTokens();
            args = new String[] {
                "acquire",
                request.owner(),
                letter(key.mode()),
                Long.toString(request.leaseMillis()),
                Integer.toString(request.permits()),
                Long.toString(request.queueMillis()),
                request.downgradeFrom() == null ? "" : request.downgradeFrom(),
                key.name()
            };
        }
        CompletableFuture<Long> reply = replicaAcks > 0
                ? acknowledged(script, keyNames, args).thenCompose(r -> grantAcknowledged(request, r))
                : run(script, ScriptOutputType.INTEGER, keyNames, args);
        return reply.thenApply(RedisBackend::acquireResult);
    }

    private static AcquireResult acquireResult(long reply) {
        if (reply > 0) {
            return AcquireResult.granted(reply);
        }
        return AcquireResult.busy(reply == 0 ? -1 : -reply - 1);
    }

    /** A grant that too few replicas acknowledged is given back and reported as a failure. */
    private CompletableFuture<Long> grantAcknowledged(AcquireRequest request, Acknowledged reply) {
        long value = (Long) reply.value();
        if (value <= 0 || reply.replicas() >= replicaAcks) {
            return CompletableFuture.completedFuture(value);
        }
        return release(request.key(), request.owner()).toCompletableFuture().handle((released, error) -> {
            throw new LockBackendException("acquire '" + request.key().name() + "': only "
                    + reply.replicas() + " of the " + replicaAcks + " required replicas acknowledged the grant within "
                    + replicaAckMillis + "ms; the grant was given back");
        });
    }

    private record Acknowledged(Object value, long replicas) {}

    /**
     * Runs the script on the acknowledgement connection with {@code WAIT} pipelined right behind it, so the
     * wait covers the script's writes; after a NOSCRIPT reply both are sent again with EVAL.
     */
    private CompletableFuture<Acknowledged> acknowledged(LuaScript script, String[] keys, String[] args) {
        RedisAsyncCommands<String, String> acks = connections.acks();
        ScriptOutputType type = "renew".equals(args[0]) ? ScriptOutputType.MULTI : ScriptOutputType.INTEGER;
        CompletableFuture<Object> first =
                acks.<Object>evalsha(script.sha(), type, keys, args).toCompletableFuture();
        CompletableFuture<Long> replicas =
                acks.waitForReplication(replicaAcks, replicaAckMillis).toCompletableFuture();
        return first.thenCombine(replicas, Acknowledged::new).exceptionallyCompose(error -> {
            if (!LuaScript.isNoScript(error)) {
                return CompletableFuture.failedFuture(error);
            }
            CompletableFuture<Object> again =
                    acks.<Object>eval(script.body(), type, keys, args).toCompletableFuture();
            CompletableFuture<Long> waited =
                    acks.waitForReplication(replicaAcks, replicaAckMillis).toCompletableFuture();
            return again.thenCombine(waited, Acknowledged::new);
        });
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
        List<RenewRequest> exclusive = new ArrayList<>();
        List<RenewRequest> general = new ArrayList<>();
        for (RenewRequest request : batch) {
            (request.key().mode() == Mode.EXCLUSIVE ? exclusive : general).add(request);
        }
        List<CompletableFuture<Set<String>>> calls = new ArrayList<>();
        renew(LuaScript.EXCLUSIVE, exclusive, calls);
        renew(LuaScript.DLOCK, general, calls);
        return union(calls);
    }

    /** Adds the calls renewing {@code batch} with {@code script} to {@code calls}. */
    private void renew(LuaScript script, List<RenewRequest> batch, List<CompletableFuture<Set<String>>> calls) {
        if (batch.isEmpty()) {
            return;
        }
        List<String> prefixes = new ArrayList<>(batch.size());
        for (RenewRequest request : batch) {
            prefixes.add(ResourceKeys.of(request.key()).prefix());
        }
        for (List<Integer> group : connections.groupByNode(prefixes)) {
            for (int from = 0; from < group.size(); from += RENEW_CHUNK) {
                List<Integer> chunk = group.subList(from, Math.min(group.size(), from + RENEW_CHUNK));
                calls.add(renewGroup(script, batch, prefixes, chunk)
                        .exceptionallyCompose(error -> connections.isCluster()
                                ? renewBySlot(script, batch, prefixes, chunk)
                                : CompletableFuture.failedFuture(error)));
            }
        }
    }

    private CompletableFuture<Set<String>> renewBySlot(
            LuaScript script, List<RenewRequest> batch, List<String> prefixes, List<Integer> positions) {
        List<String> subset = new ArrayList<>(positions.size());
        for (int position : positions) {
            subset.add(prefixes.get(position));
        }
        List<CompletableFuture<Set<String>>> calls = new ArrayList<>();
        for (List<Integer> slotGroup : connections.groupBySlot(subset)) {
            List<Integer> original = new ArrayList<>(slotGroup.size());
            for (int i : slotGroup) {
                original.add(positions.get(i));
            }
            calls.add(renewGroup(script, batch, prefixes, original));
        }
        return union(calls);
    }

    private static CompletableFuture<Set<String>> union(List<CompletableFuture<Set<String>>> calls) {
        return CompletableFuture.allOf(calls.toArray(CompletableFuture[]::new)).thenApply(done -> {
            Set<String> lost = new HashSet<>();
            for (CompletableFuture<Set<String>> call : calls) {
                lost.addAll(call.join());
            }
            return lost;
        });
    }

    /** One script call renewing the leases at {@code positions}, all served by one node. */
    private CompletableFuture<Set<String>> renewGroup(
            LuaScript script, List<RenewRequest> batch, List<String> prefixes, List<Integer> positions) {
        String[] args = new String[1 + 3 * positions.size()];
        args[0] = "renew";
        int i = 1;
        for (int position : positions) {
            RenewRequest request = batch.get(position);
            args[i++] = prefixes.get(position);
            args[i++] = request.owner();
            args[i++] = Long.toString(request.leaseMillis());
        }
        String[] routing = {prefixes.get(positions.get(0)) + ":x"};
        CompletableFuture<List<Object>> reply;
        if (replicaAcks > 0) {
            reply = acknowledged(script, routing, args).thenApply(acked -> {
                if (acked.replicas() < replicaAcks) {
                    throw new LockBackendException("renew: only " + acked.replicas() + " of the " + replicaAcks
                            + " required replicas acknowledged within " + replicaAckMillis + "ms");
                }
                @SuppressWarnings("unchecked")
                List<Object> value = (List<Object>) acked.value();
                return value;
            });
        } else {
            reply = run(script, ScriptOutputType.MULTI, routing, args);
        }
        return reply.thenApply(lostPositions -> {
            Set<String> lost = new HashSet<>();
            for (Object position : lostPositions) {
                lost.add(batch.get(positions.get(((Long) position).intValue() - 1))
                        .owner());
            }
            return lost;
        });
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
     * Both scripts step the token counter by {@value #TOKEN_BLOCK} per grant ({@code TOKEN_BLOCK} in the
     * scripts), so the engine may hand a hold to this client's own waiting threads with the tokens in
     * between. Kept small so that the counter stays behind the server clock in microseconds, which is
     * what keeps tokens increasing where the counter is lost.
     */
    @Override
    public long tokenBlock() {
        return TOKEN_BLOCK;
    }

    @Override
    public CompletionStage<LockInfo> describe(LockKey key) {
        return describe(ResourceKeys.of(key), key.name());
    }

    private CompletableFuture<LockInfo> describe(ResourceKeys keys, String knownName) {
        LuaScript script = LuaScript.forKind(keys.kind());
        String[] keyNames = script == LuaScript.EXCLUSIVE ? new String[] {keys.holders()} : keys.resource();
        return this.<List<Object>>run(script, ScriptOutputType.MULTI, keyNames, "describe")
                .thenApply(reply -> {
                    String name = knownName != null ? knownName : (String) reply.get(0);
                    int waiters = ((Long) reply.get(1)).intValue();
                    List<LockInfo.Holder> holders = new ArrayList<>();
                    for (int i = 2; i + 2 < reply.size(); i += 3) {
                        String owner = (String) reply.get(i);
                        String value = (String) reply.get(i + 1);
                        long ttl = (Long) reply.get(i + 2);
                        holders.add(new LockInfo.Holder(
                                owner,
                                Long.parseLong(value.substring(1)),
                                modeName(value.charAt(0)),
                                Duration.ofMillis(ttl)));
                    }
                    return new LockInfo(name, keys.kind(), holders, waiters);
                });
    }

    @Override
    public CompletionStage<List<LockInfo>> list(String namespace, String prefix) {
        return scan(namespace, ScanCursor.INITIAL, new ArrayList<>()).thenCompose(found -> {
            List<CompletableFuture<LockInfo>> described = new ArrayList<>();
            for (ResourceKeys keys : found) {
                described.add(describe(keys, null));
            }
            return CompletableFuture.allOf(described.toArray(CompletableFuture[]::new))
                    .thenApply(done -> {
                        List<LockInfo> result = new ArrayList<>();
                        for (CompletableFuture<LockInfo> info : described) {
                            LockInfo lock = info.join();
                            if (!lock.holders().isEmpty() && lock.name().startsWith(prefix)) {
                                result.add(lock);
                            }
                        }
                        return result;
                    });
        });
    }

    private CompletableFuture<Collection<ResourceKeys>> scan(
            String namespace, ScanCursor cursor, Collection<ResourceKeys> found) {
        ScanArgs args =
                ScanArgs.Builder.matches(ResourceKeys.holdersPattern(namespace)).limit(1000);
        return connections
                .commands()
                .scan(cursor, args)
                .toCompletableFuture()
                .thenCompose((KeyScanCursor<String> page) -> {
                    for (String key : page.getKeys()) {
                        ResourceKeys keys = ResourceKeys.fromHoldersKey(namespace, key);
                        if (keys != null) {
                            found.add(keys);
                        }
                    }
                    return page.isFinished() ? CompletableFuture.completedFuture(found) : scan(namespace, page, found);
                });
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
