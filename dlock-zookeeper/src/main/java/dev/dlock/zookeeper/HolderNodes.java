package dev.dlock.zookeeper;

import static dev.dlock.zookeeper.Background.code;
import static dev.dlock.zookeeper.Background.failure;

import dev.dlock.LockBackendException;
import dev.dlock.zookeeper.NodeLayout.Data;
import java.util.List;
import java.util.concurrent.CompletableFuture;
import org.apache.curator.framework.CuratorFramework;
import org.apache.curator.framework.api.CuratorEvent;
import org.apache.curator.utils.ZKPaths;
import org.apache.zookeeper.CreateMode;
import org.apache.zookeeper.KeeperException;
import org.apache.zookeeper.Op;
import org.apache.zookeeper.ZooKeeper;

/**
 * Writes and deletes the exclusive lock's holder node, always together with its guard.
 *
 * <p>Why a guard: the holder node has one fixed path that every holder reuses, and ZooKeeper can delete
 * conditionally only on a node's data version, which is 0 for every holder. So each holder node is
 * created in one transaction with a guard {@code <path>!<owner>} ({@link NodeLayout#guardPath}), and
 * deleted in one transaction with it. When the node was force-released (node and guard deleted) and
 * someone else holds the path since, the old holder's delete finds no guard and fails as a whole: a
 * release only ever deletes the node it created.
 *
 * <p>Concurrency: stateless apart from the client; every method returns at once with a future that
 * completes on ZooKeeper's event thread.
 *
 * <p>Failure modes: a transaction cannot create parents, so a missing (or just reaped) kind directory is
 * created and the transaction retried; a holder's delete goes only through the handle of the session that
 * created the node (never a Curator retry in another session); a dead session's delete answers false.
 */
final class HolderNodes {
    private static final int MAX_TRIES = 5;

    private final CuratorFramework client;

    HolderNodes(CuratorFramework client) {
        this.client = client;
    }

    /** Creates the holder node of {@code owner} with its guard; the event of the transaction. */
    CompletableFuture<CuratorEvent> create(String path, String owner, byte[] data) {
        return create(path, NodeLayout.guardPath(path, owner), data, 0);
    }

    private CompletableFuture<CuratorEvent> create(String path, String guard, byte[] data, int tries) {
        return Background.run(cb -> client.transaction()
                        .inBackground(cb)
                        .forOperations(
                                client.transactionOp()
                                        .create()
                                        .withMode(CreateMode.EPHEMERAL)
                                        .forPath(path, data),
                                client.transactionOp()
                                        .create()
                                        .withMode(CreateMode.EPHEMERAL)
                                        .forPath(guard, new byte[0])))
                .thenCompose(event -> {
                    if (code(event) != KeeperException.Code.NONODE || tries + 1 >= MAX_TRIES) {
                        return CompletableFuture.completedFuture(event);
                    }
                    String dir = ZKPaths.getPathAndNode(path).getPath();
                    return Background.run(cb -> client.create()
                                    .creatingParentContainersIfNeeded()
                                    .withMode(CreateMode.CONTAINER)
                                    .inBackground(cb)
                                    .forPath(dir))
                            .thenCompose(made -> create(path, guard, data, tries + 1));
                });
    }

    /**
     * Deletes the holder node of {@code owner} and its guard, through the handle of {@code ownerSession};
     * false when the node (or only the guard) is gone, or the session is.
     */
    CompletableFuture<Boolean> delete(String path, String owner, long ownerSession) {
        ZooKeeper zk;
        try {
            zk = client.getZookeeperClient().getZooKeeper();
        } catch (Exception e) {
            return CompletableFuture.completedFuture(false);
        }
        if (zk.getSessionId() != ownerSession) {
            return CompletableFuture.completedFuture(false); // gone with its session
        }
        String namespace = client.getNamespace();
        List<Op> ops = List.of(
                Op.delete(ZKPaths.fixForNamespace(namespace, NodeLayout.guardPath(path, owner)), -1),
                Op.delete(ZKPaths.fixForNamespace(namespace, path), -1));
        CompletableFuture<Boolean> result = new CompletableFuture<>();
        zk.multi(
                ops,
                (rc, p, ctx, results) -> {
                    KeeperException.Code code = KeeperException.Code.get(rc);
                    switch (code) {
                        case OK -> result.complete(true);
                        case NONODE, SESSIONEXPIRED -> result.complete(false);
                        default -> result.completeExceptionally(KeeperException.create(code, path));
                    }
                },
                null);
        return result;
    }

    /** Deletes a guard left without its node (a create retried after its node was force-released). */
    CompletableFuture<Void> deleteGuard(String path, String owner) {
        return Background.delete(client, NodeLayout.guardPath(path, owner)).handle((deleted, error) -> null);
    }

    /**
     * Administrative: deletes whoever's holder node is there, with its guard; a node without dlock's data
     * (so without a guard) the plain way. When the holder changed between the read and the delete (the
     * transaction finds the read holder's guard gone), the node is read again and the new holder's node
     * deleted with its guard: deleting it the plain way would leave that guard behind, and with it a late
     * release of that holder could delete the node of whoever takes the lock next.
     *
     * @return true if a node was deleted, false if none was there
     */
    CompletableFuture<Boolean> forceDelete(String path) {
        return forceDelete(path, 0);
    }

    private CompletableFuture<Boolean> forceDelete(String path, int tries) {
        return Background.run(cb -> client.getData().inBackground(cb).forPath(path))
                .thenCompose(event -> {
                    if (code(event) == KeeperException.Code.NONODE) {
                        return CompletableFuture.completedFuture(false);
                    }
                    if (code(event) != KeeperException.Code.OK) {
                        throw failure(event);
                    }
                    Data data = Data.parse(event.getData());
                    if (data == null) {
                        return Background.delete(client, path);
                    }
                    String guard = NodeLayout.guardPath(path, data.owner());
                    return Background.run(cb -> client.transaction()
                                    .inBackground(cb)
                                    .forOperations(
                                            client.transactionOp().delete().forPath(guard),
                                            client.transactionOp().delete().forPath(path)))
                            .thenCompose(deleted -> {
                                if (code(deleted) == KeeperException.Code.OK) {
                                    return CompletableFuture.completedFuture(true);
                                }
                                if (code(deleted) == KeeperException.Code.NONODE && tries + 1 < MAX_TRIES) {
                                    return forceDelete(path, tries + 1); // released, or taken by another since
                                }
                                throw code(deleted) == KeeperException.Code.NONODE
                                        ? new LockBackendException("the holder of " + path + " changed " + MAX_TRIES
                                                + " times during its force-release; try again")
                                        : failure(deleted);
                            });
                });
    }
}
