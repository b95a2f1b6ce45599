package dev.dlock.zookeeper;

import static dev.dlock.zookeeper.Background.code;
import static dev.dlock.zookeeper.Background.failure;

import dev.dlock.zookeeper.NodeLayout.Entry;
import java.util.ArrayList;
import java.util.Comparator;
import java.util.List;
import java.util.concurrent.CompletableFuture;
import java.util.function.Function;
import org.apache.curator.framework.CuratorFramework;
import org.apache.curator.framework.api.CuratorEvent;
import org.apache.zookeeper.CreateMode;
import org.apache.zookeeper.KeeperException;
import org.apache.zookeeper.Watcher;

/**
 * The plain ZooKeeper requests the recipes make, as futures ({@link Background}).
 *
 * <p>Concurrency: stateless apart from the client; futures complete on ZooKeeper's event thread.
 *
 * <p>Failure modes: a create may meet a parent CONTAINER the server reaped between Curator creating it and
 * creating the child (NONODE, nothing created): it is retried with its parents.
 */
final class Requests {
    private static final int MAX_TRIES = 5;

    final CuratorFramework client;

    Requests(CuratorFramework client) {
        this.client = client;
    }

    /** Creates a node and any missing parent CONTAINER nodes; the event of the last try. */
    CompletableFuture<CuratorEvent> create(String path, CreateMode mode, byte[] data) {
        return create(path, mode, data, 0);
    }

    private CompletableFuture<CuratorEvent> create(String path, CreateMode mode, byte[] data, int tries) {
        return Background.run(cb -> client.create()
                        .creatingParentContainersIfNeeded()
                        .withMode(mode)
                        .inBackground(cb)
                        .forPath(path, data))
                .thenCompose(event -> code(event) == KeeperException.Code.NONODE && tries + 1 < MAX_TRIES
                        ? create(path, mode, data, tries + 1)
                        : CompletableFuture.completedFuture(event));
    }

    /** Reads a node, setting a data watch when {@code watcher} is not null (none if the node is gone). */
    CompletableFuture<CuratorEvent> getData(String path, Watcher watcher) {
        return Background.run(cb -> {
            if (watcher == null) {
                client.getData().inBackground(cb).forPath(path);
            } else {
                client.getData().usingWatcher(watcher).inBackground(cb).forPath(path);
            }
        });
    }

    CompletableFuture<CuratorEvent> getChildren(String path) {
        return Background.run(cb -> client.getChildren().inBackground(cb).forPath(path));
    }

    /** Lists a node's children and hands the answer to {@code then} on the event thread, in its order. */
    <T> CompletableFuture<T> getChildren(String path, Function<CuratorEvent, CompletableFuture<T>> then) {
        return Background.run(cb -> client.getChildren().inBackground(cb).forPath(path), then);
    }

    /** Checks that a node exists, setting an exists watch when {@code watcher} is not null. */
    CompletableFuture<CuratorEvent> exists(String path, Watcher watcher) {
        return Background.run(cb -> {
            if (watcher == null) {
                client.checkExists().inBackground(cb).forPath(path);
            } else {
                client.checkExists().usingWatcher(watcher).inBackground(cb).forPath(path);
            }
        });
    }

    /**
     * Deletes a sequential entry; true if it existed. An entry's path is unique and never reused, so
     * Curator's guaranteed delete (retried after reconnecting, even in a new session) is safe.
     */
    CompletableFuture<Boolean> deleteEntry(String path) {
        return Background.run(
                        cb -> client.delete().guaranteed().inBackground(cb).forPath(path))
                .thenApply(event -> switch (code(event)) {
                    case OK -> true;
                    case NONODE -> false;
                    default -> throw failure(event);
                });
    }

    void deleteEntryQuietly(String path) {
        deleteEntry(path).exceptionally(error -> false);
    }

    /** The queue entries among a directory's children, by sequence; other children are skipped. */
    static List<Entry> sortedEntries(List<String> children) {
        List<Entry> entries = new ArrayList<>(children.size());
        for (String child : children) {
            Entry e = Entry.parse(child);
            if (e != null) {
                entries.add(e);
            }
        }
        entries.sort(Comparator.comparingLong(Entry::sequence));
        return entries;
    }
}
