package dev.dlock.zookeeper;

import dev.dlock.LockBackendException;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.CompletionStage;
import java.util.function.Function;
import org.apache.curator.framework.CuratorFramework;
import org.apache.curator.framework.api.BackgroundCallback;
import org.apache.curator.framework.api.CuratorEvent;
import org.apache.zookeeper.KeeperException;

/**
 * Turns Curator's background (callback) operations into futures.
 *
 * <p>Concurrency: the future completes on ZooKeeper's event thread, which runs every callback and watch
 * of one client in order. Whatever is chained on it must not block. A continuation that must keep that
 * order (one that reads state which later events change) is attached before the request is sent ({@link
 * #run(Operation, Function)}).
 *
 * <p>Failure modes: an operation Curator refuses to start (a closed client) completes exceptionally at
 * once; a finished operation completes normally with its event, whatever its result code, so callers
 * decide which codes are answers (a missing node) and which are failures ({@link #failure}).
 */
final class Background {
    private Background() {}

    /** One Curator operation started in background mode with the given callback. */
    @FunctionalInterface
    interface Operation {
        void start(BackgroundCallback callback) throws Exception;
    }

    static CompletableFuture<CuratorEvent> run(Operation operation) {
        CompletableFuture<CuratorEvent> result = new CompletableFuture<>();
        start(operation, result);
        return result;
    }

    /**
     * Runs an operation with {@code then} attached to its answer before the request is sent, so that it
     * runs on the event thread in the order of the client's other answers and watches, even when the
     * answer comes before this method returns (a continuation attached to {@link #run}'s future after
     * that runs on the calling thread instead, after whatever the event thread handled meanwhile).
     */
    static <T> CompletableFuture<T> run(
            Operation operation, Function<CuratorEvent, ? extends CompletionStage<T>> then) {
        CompletableFuture<CuratorEvent> answer = new CompletableFuture<>();
        CompletableFuture<T> result = answer.thenCompose(then);
        start(operation, answer);
        return result;
    }

    private static void start(Operation operation, CompletableFuture<CuratorEvent> answer) {
        try {
            operation.start((client, event) -> answer.complete(event));
        } catch (Exception e) {
            answer.completeExceptionally(e);
        }
    }

    static KeeperException.Code code(CuratorEvent event) {
        return KeeperException.Code.get(event.getResultCode());
    }

    /** The exception for an unexpected result code (unchecked, so that it can leave a callback). */
    static LockBackendException failure(CuratorEvent event) {
        KeeperException cause = KeeperException.create(code(event), event.getPath());
        return new LockBackendException("ZooKeeper: " + cause.getMessage(), cause);
    }

    /** Deletes a node, whoever made it (no version check, no retry in another session); true if it existed. */
    static CompletableFuture<Boolean> delete(CuratorFramework client, String path) {
        return run(cb -> client.delete().inBackground(cb).forPath(path)).thenApply(event -> switch (code(event)) {
            case OK -> true;
            case NONODE -> false;
            default -> throw failure(event);
        });
    }
}
