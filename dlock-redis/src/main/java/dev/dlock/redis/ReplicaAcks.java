package dev.dlock.redis;

import dev.dlock.LockBackendException;
import io.lettuce.core.ScriptOutputType;
import io.lettuce.core.api.async.RedisAsyncCommands;
import java.time.Duration;
import java.util.List;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.CompletionStage;
import java.util.function.Supplier;

/**
 * The replica-acknowledgement path: grants and renewals that count only once {@code n} replicas have
 * acknowledged them ({@code WAIT n timeout}).
 *
 * <p>Design: each script call goes over a connection reserved for this path, with {@code WAIT} pipelined
 * right behind it ({@link LuaScript#runFollowedBy}), so the wait covers exactly the script's writes and a
 * blocking {@code WAIT} never holds up the shared command connection. Too few acknowledgements within the
 * timeout: a grant is given back (the caller's {@code giveBack}) and the acquisition fails with a {@link
 * LockBackendException} naming the replica count; a renewal batch fails the same way, and the engine
 * retries it until the leases' local deadlines, so a renewal the replicas never saw never extends what the
 * holder believes. On by default for Sentinel (see {@link #effectiveTimeout}); optional for standalone;
 * not available for Cluster (no {@code WAIT} across shards) nor Redlock (independent masters).
 *
 * <p>Concurrency: immutable; the connection is thread-safe.
 *
 * <p>Failure modes: a lost connection or a timeout fails the stage like any other store call; a grant
 * whose give-back also fails is still reported as failed (the engine gives it back once more, and the
 * lease runs out on the server in any case).
 */
final class ReplicaAcks {
    private final RedisAsyncCommands<String, String> connection;
    private final FunctionLibrary library;
    private final int replicas;
    private final long timeoutMillis;

    /**
     * @param connection the connection reserved for these calls
     * @param library whether the server runs the scripts as functions (the main connection's, same server)
     * @param replicas how many replicas must acknowledge
     * @param timeout how long {@code WAIT} waits for them
     */
    ReplicaAcks(
            RedisAsyncCommands<String, String> connection, FunctionLibrary library, int replicas, Duration timeout) {
        this.connection = connection;
        this.library = library;
        this.replicas = replicas;
        this.timeoutMillis = timeout.toMillis();
    }

    /**
     * The timeout a backend uses: the configured one, or by default (null, a Sentinel URI without {@code
     * waitTimeout}) half the operation timeout. Measured on the test machine (master and replica on
     * loopback, 2 shared cores at load average about 9): {@code SET} followed by {@code WAIT 1} answered at
     * p50 0.15 ms, p99 2-3 ms, p99.9 4-8 ms over 5,000 pairs, but a starved replica stalled far longer, 0.7 s
     * and 2 s once each; a fixed 200 ms default failed a grant of the Sentinel contract suite's 2,000-caller
     * case under the whole module's load. A timeout only costs when no replica answers (the grant fails
     * after it), so the default gives the replica as long as the call may take, less the script's half.
     */
    static Duration effectiveTimeout(Duration configured, Duration operationTimeout) {
        return configured != null ? configured : operationTimeout.dividedBy(2);
    }

    /**
     * Runs an acquire; a grant (a positive reply) that too few replicas acknowledged is given back with
     * {@code giveBack} and fails with a {@link LockBackendException}.
     */
    CompletableFuture<Long> acquire(
            LuaScript script,
            String[] keys,
            String[] args,
            String name,
            Supplier<? extends CompletionStage<?>> giveBack) {
        return script.<Long, Long>runFollowedBy(connection, library, ScriptOutputType.INTEGER, keys, args, this::await)
                .thenCompose(reply -> {
                    long value = reply.value();
                    if (value <= 0 || reply.next() >= replicas) {
                        return CompletableFuture.completedFuture(value);
                    }
                    return giveBack.get().toCompletableFuture().handle((released, error) -> {
                        throw new LockBackendException("acquire '" + name + "': only " + reply.next() + " of the "
                                + replicas + " required replicas acknowledged the grant within " + timeoutMillis
                                + "ms (replica acknowledgements, waitReplicas/waitTimeout); the grant was given"
                                + " back");
                    });
                });
    }

    /** Runs a renewal batch; fails with a {@link LockBackendException} when too few replicas acknowledged. */
    CompletableFuture<List<Object>> renew(LuaScript script, String[] keys, String[] args) {
        return script.<List<Object>, Long>runFollowedBy(
                        connection, library, ScriptOutputType.MULTI, keys, args, this::await)
                .thenApply(reply -> {
                    if (reply.next() < replicas) {
                        throw new LockBackendException("renew: only " + reply.next() + " of the " + replicas
                                + " required replicas acknowledged within " + timeoutMillis
                                + "ms (replica acknowledgements, waitReplicas/waitTimeout)");
                    }
                    return reply.value();
                });
    }

    private CompletionStage<Long> await() {
        return connection.waitForReplication(replicas, timeoutMillis);
    }
}
