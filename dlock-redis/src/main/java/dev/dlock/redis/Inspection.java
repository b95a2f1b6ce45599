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
 * The read-only views of the Redis backend: one lock's holders ({@code describe}) and the held locks of a
 * namespace ({@code list}).
 *
 * <p>Design: {@code describe} is one read-only script call ({@code describe} of either script, which answer
 * in one shape: name, waiters, then owner, mode letter and token, time left per holder); {@code list}
 * scans the namespace's holder keys ({@code SCAN MATCH}, pages of 1000) and describes each. In a Cluster
 * Lettuce's {@code SCAN} walks every master in turn.
 *
 * <p>Concurrency: immutable; calls only send commands.
 *
 * <p>Failure modes: any failed call fails the view; nothing is retried here.
 */
final class Inspection {
    private final Connections connections;

    Inspection(Connections connections) {
        this.connections = connections;
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

    /** The holders and waiters of the resource {@code keys}; the name is read from Redis when null. */
    CompletableFuture<LockInfo> describe(ResourceKeys keys, String knownName) {
        LuaScript script = LuaScript.forKind(keys.kind());
        String[] keyNames = script == LuaScript.EXCLUSIVE ? new String[] {keys.holders()} : keys.resource();
        return script.<List<Object>>run(connections.commands(), ScriptOutputType.MULTI, keyNames, "describe")
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
}
