package dev.dlock.redis;

import dev.dlock.LockInfo;
import io.lettuce.core.KeyScanCursor;
import io.lettuce.core.ScanArgs;
import io.lettuce.core.ScanCursor;
import io.lettuce.core.ScriptOutputType;
import java.time.Duration;
import java.util.ArrayList;
import java.util.Collection;
import java.util.List;
import java.util.concurrent.CompletableFuture;

/**
 * The read-only views of the Redis backend: one lock's holders ({@code describe}), the held locks of a
 * namespace ({@code list}) and its hold-back after a lost state ({@code heldBack}).
 *
 * <p>Design: {@code describe} is one read-only script call ({@code describe} of either script, which answer
 * in one shape: name, waiters, then owner, mode letter and token, time left per holder), and beside it,
 * while the hold-back is on, a second read-only one ({@code heldback}: what a grant asked now would meet,
 * {@code epoch.lua}, nothing written); {@code list} scans the namespace's holder keys ({@code SCAN MATCH},
 * pages of 1000) and describes each without the second call (a held-back namespace holds nothing: its
 * holds were lost, and nothing is granted until the hold-back ends). In a Cluster Lettuce's {@code SCAN}
 * walks every master in turn.
 *
 * <p>Concurrency: immutable; calls only send commands.
 *
 * <p>Failure modes: any failed call fails the view; nothing is retried here.
 */
final class Inspection {
    private final Connections connections;
    private final HoldBack holdBack;

    Inspection(Connections connections, HoldBack holdBack) {
        this.connections = connections;
        this.holdBack = holdBack;
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

    /** The holders, waiters and hold-back of the resource {@code keys} named {@code name}. */
    CompletableFuture<LockInfo> describe(ResourceKeys keys, String name) {
        if (!holdBack.on()) {
            return holders(keys, name);
        }
        return holders(keys, name)
                .thenCombine(
                        heldBackAt(keys.epoch(connections.isCluster())),
                        (info, left) -> new LockInfo(info.name(), info.kind(), info.holders(), info.waiters(), left));
    }

    /**
     * The hold-back a grant in {@code namespace} would meet now. Refused in a Cluster, where it is one per
     * namespace and hash slot: {@link #describe} tells it per lock.
     */
    CompletableFuture<Duration> heldBack(String namespace) {
        if (!holdBack.on()) {
            return CompletableFuture.completedFuture(Duration.ZERO);
        }
        if (connections.isCluster()) {
            return CompletableFuture.failedFuture(new UnsupportedOperationException(
                    "a Redis Cluster holds grants back per namespace and hash slot, not per namespace: "
                            + "describe(name) tells it for one lock"));
        }
        return heldBackAt(ResourceKeys.epoch(namespace));
    }

    /** The hold-back read from the marker {@code epoch} ({@code epoch.lua}), nothing written. */
    private CompletableFuture<Duration> heldBackAt(String epoch) {
        String[] args = new String[] {
            "heldback", holdBack.scriptArgs().get(0), holdBack.scriptArgs().get(1)
        };
        return LuaScript.EXCLUSIVE
                .<Long>run(
                        connections.commands(),
                        connections.library(),
                        ScriptOutputType.INTEGER,
                        new String[] {epoch},
                        args)
                .thenApply(Duration::ofMillis);
    }

    /** The holders and waiters of the resource {@code keys}; the name is read from Redis when null. */
    private CompletableFuture<LockInfo> holders(ResourceKeys keys, String knownName) {
        LuaScript script = LuaScript.forKind(keys.kind());
        String[] keyNames = script == LuaScript.EXCLUSIVE ? new String[] {keys.holders()} : keys.resource();
        return script.<List<Object>>run(
                        connections.commands(), connections.library(), ScriptOutputType.MULTI, keyNames, "describe")
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

    /** The held locks of {@code namespace} whose names start with {@code prefix}. */
    CompletableFuture<List<LockInfo>> list(String namespace, String prefix) {
        return scan(namespace, ScanCursor.INITIAL, new ArrayList<>()).thenCompose(found -> {
            List<CompletableFuture<LockInfo>> described = new ArrayList<>();
            for (ResourceKeys keys : found) {
                described.add(holders(keys, null));
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
}
