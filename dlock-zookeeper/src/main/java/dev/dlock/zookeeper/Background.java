package dev.dlock.zookeeper;

import dev.dlock.LockBackendException;
import java.util.concurrent.CompletableFuture;
import org.apache.curator.framework.CuratorFramework;
import org.apache.curator.framework.api.BackgroundCallback;
import org.apache.curator.framework.api.CuratorEvent;
import org.apache.zookeeper.KeeperException;

/**
 * Turns Curator's background (callback) operations into futures.
 *
 * <p>Concurrency: the future completes on ZooKeeper's event thread, which runs every callback and watch
 * of one client in order. Whatever is chained on it must not block.
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
        try {
            operation.start((client, event) -> result.complete(event));
        } catch (Exception e) {
            result.completeExceptionally(e);
        }
        return result;
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
