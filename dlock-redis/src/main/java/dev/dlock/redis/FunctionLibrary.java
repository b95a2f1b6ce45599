package dev.dlock.redis;

import io.lettuce.core.api.async.RedisFunctionAsyncCommands;
import io.lettuce.core.cluster.api.StatefulRedisClusterConnection;
import io.lettuce.core.cluster.api.async.RedisClusterAsyncCommands;
import io.lettuce.core.cluster.models.partitions.RedisClusterNode;
import java.time.Duration;
import java.util.ArrayList;
import java.util.List;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.CompletionException;
import java.util.concurrent.ExecutionException;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.TimeoutException;
import java.util.concurrent.atomic.AtomicBoolean;

/**
 * Whether a backend's server runs dlock's scripts as a function library ({@code FCALL}, Redis 7+), and
 * loading that library on it (on every master of a Cluster).
 *
 * <p>Why: the hold-back after a lost state ({@code epoch.lua}) compares the namespace's marker with the
 * server process's run id on every grant. An {@code EVAL} script cannot keep anything between calls, so it
 * reads {@code INFO server} each time (about 20 us of server CPU per lock and unlock, docs/benchmarks.md).
 * A function library keeps the id in a library-level variable: the library's code runs once per load, and
 * every server process loads it anew (from its RDB or AOF file at start, from its master as a replica, or
 * from a client after "Function not found"), so what it kept is always the running process's id. The
 * scripts are the same text either way ({@link LuaScript}); only the run id's reading differs.
 *
 * <p>Design note: {@link LuaScript} asks {@link #usable()} before each call and reports what a call found:
 * the library missing on the node that served it ({@link #missing}: loaded again in the background, the
 * call itself served by {@code EVAL}), or the server refusing functions ({@link #refused}: Redis before
 * 7.0 answers "unknown command", an ACL user without {@code +fcall}/{@code +function} NOPERM; from then
 * on every call of this backend is an {@code EVAL} script, exactly as safe). Both paths keep the hold-back
 * whole; only the cost differs.
 *
 * <p>Concurrency: thread-safe; at most one background load runs at a time.
 *
 * <p>Failure modes: loading is best effort (a server that cannot take the library is served by {@code
 * EVAL}); the load at connect waits at most the operation timeout.
 */
final class FunctionLibrary {
    /** Loads the library where this backend's commands go; completes when every target answered. */
    @FunctionalInterface
    interface Loader {
        CompletableFuture<Void> load(String text);
    }

    private final Loader loader;
    private final AtomicBoolean loading = new AtomicBoolean();
    private volatile boolean usable;

    private FunctionLibrary(Loader loader) {
        this.loader = loader;
    }

    /** The library of a standalone or Sentinel backend, loaded now on its server. */
    static FunctionLibrary loadedOn(RedisClusterAsyncCommands<String, String> commands, Duration timeout) {
        FunctionLibrary library = new FunctionLibrary(text -> loadOne(commands, text));
        library.loadNow(timeout);
        return library;
    }

    /**
     * The library of a Cluster backend, loaded now on every master the client knows. Node connections are
     * asked for asynchronously: a reload starts on a Lettuce I/O thread, which must never block.
     */
    static FunctionLibrary loadedOnMasters(StatefulRedisClusterConnection<String, String> cluster, Duration timeout) {
        FunctionLibrary library = new FunctionLibrary(text -> {
            List<CompletableFuture<Void>> loads = new ArrayList<>();
            for (RedisClusterNode node : cluster.getPartitions()) {
                if (node.is(RedisClusterNode.NodeFlag.UPSTREAM)) {
                    loads.add(cluster.getConnectionAsync(node.getNodeId())
                            .thenCompose(connection -> loadOne(connection.async(), text)));
                }
            }
            return CompletableFuture.allOf(loads.toArray(CompletableFuture[]::new));
        });
        library.loadNow(timeout);
        return library;
    }

    private static CompletableFuture<Void> loadOne(RedisFunctionAsyncCommands<String, String> commands, String text) {
        return commands.functionLoad(text)
                .toCompletableFuture()
                .<Void>thenApply(name -> null)
                .exceptionallyCompose(error -> alreadyLoaded(error)
                        ? CompletableFuture.completedFuture(null)
                        : CompletableFuture.failedFuture(error));
    }

    /** The same name means the same text (the name carries its hash): another client loaded it first. */
    private static boolean alreadyLoaded(Throwable error) {
        String message = message(error);
        return message != null && message.contains("already exists");
    }

    private void loadNow(Duration timeout) {
        try {
            loader.load(LuaScript.LIBRARY_TEXT).get(timeout.toNanos(), TimeUnit.NANOSECONDS);
            usable = true;
        } catch (InterruptedException e) {
            Thread.currentThread().interrupt();
        } catch (ExecutionException | TimeoutException e) {
            // Redis before 7.0, an ACL without FUNCTION, or a slow server: every call of this backend is an
            // EVAL script, as safe and slower.
        }
    }

    /** Whether calls should be {@code FCALL}s of the library. */
    boolean usable() {
        return usable;
    }

    /**
     * A call found no library on the node that served it (a server restarted without its files, {@code
     * FUNCTION FLUSH}, a Cluster node added later): loads it again in the background.
     */
    void missing() {
        if (!loading.compareAndSet(false, true)) {
            return;
        }
        loader.load(LuaScript.LIBRARY_TEXT).whenComplete((done, error) -> {
            String message = error == null ? null : message(error);
            if (message != null && (message.startsWith("NOPERM") || message.startsWith("ERR unknown command"))) {
                usable = false; // a user who may call functions but not load them: scripts from now on
            }
            loading.set(false);
        });
    }

    /** The server refused {@code FCALL} itself: this backend uses {@code EVAL} from now on. */
    void refused() {
        usable = false;
    }

    /** Whether the library does not exist on the node that answered {@code error}. */
    static boolean isMissing(Throwable error) {
        String message = message(error);
        return message != null && message.startsWith("ERR Function not found");
    }

    /**
     * Whether {@code error} says the server or the user cannot run functions at all: an unknown command, or
     * an ACL refusing {@code FCALL} itself (not one refusing the call's keys, which {@code EVAL} meets too).
     */
    static boolean isRefusal(Throwable error) {
        String message = message(error);
        return message != null
                && (message.startsWith("ERR unknown command")
                        || (message.startsWith("NOPERM") && message.contains("'fcall'")));
    }

    /**
     * Whether the server refused to start a function for lack of memory: a function (unlike an {@code
     * EVAL} script, which fails only at a write that needs memory) is refused whole under {@code
     * maxmemory}, so a release, which frees memory, must go as {@code EVAL}.
     */
    static boolean isOutOfMemory(Throwable error) {
        String message = message(error);
        return message != null && message.startsWith("OOM");
    }

    private static String message(Throwable error) {
        Throwable cause = error instanceof CompletionException && error.getCause() != null ? error.getCause() : error;
        return cause.getMessage();
    }
}
