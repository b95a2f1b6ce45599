package dev.dlock.zookeeper;

import static dev.dlock.zookeeper.Background.code;
import static dev.dlock.zookeeper.Background.failure;

import dev.dlock.LockInfo;
import dev.dlock.LockKind;
import dev.dlock.spi.LockKey;
import dev.dlock.spi.Mode;
import dev.dlock.spi.OrderTokens;
import dev.dlock.zookeeper.NodeLayout.Data;
import dev.dlock.zookeeper.NodeLayout.Entry;
import java.util.ArrayList;
import java.util.List;
import java.util.concurrent.CompletableFuture;
import org.apache.curator.framework.api.CuratorEvent;
import org.apache.zookeeper.KeeperException;

/**
 * The operators' view: {@code describe}, {@code list} and {@code forceRelease}, from the nodes as the
 * server has them (any client's), never from this client's local state.
 *
 * <p>Holders of a queue are those the grant rules ({@link QueueRules}) let hold given the entries in
 * sequence order; the others count as waiters. The name comes from node data when a path segment was
 * shortened ({@link NodeLayout#isComplete}).
 *
 * <p>Invariants: fencing tokens are kept (a force release deletes nodes; czxids keep increasing); the
 * exclusive node is force-deleted with its guard ({@link HolderNodes#forceDelete}).
 *
 * <p>Threads: stateless apart from the client; futures complete on ZooKeeper's event thread.
 */
final class Inspection {
    private final Requests requests;
    private final HolderNodes holders;

    Inspection(Requests requests, HolderNodes holders) {
        this.requests = requests;
        this.holders = holders;
    }

    CompletableFuture<LockInfo> describe(LockKey key) {
        return describeAt(key.kind(), NodeLayout.resourcePath(key), key.name())
                .thenApply(info -> info != null ? info : new LockInfo(key.name(), key.kind(), List.of(), 0));
    }

    /** Describes the resource at a path; the name is read from node data when not given. Null if empty. */
    private CompletableFuture<LockInfo> describeAt(LockKind kind, String path, String knownName) {
        if (kind == LockKind.LOCK) {
            return requests.getData(path, null).thenApply(event -> {
                if (code(event) == KeeperException.Code.NONODE) {
                    return null;
                }
                if (code(event) != KeeperException.Code.OK) {
                    throw failure(event);
                }
                Data data = Data.parse(event.getData());
                if (data == null) {
                    return null;
                }
                return new LockInfo(
                        data.name(),
                        kind,
                        List.of(new LockInfo.Holder(
                                data.owner(),
                                OrderTokens.ofCreation(event.getStat().getCzxid()),
                                "exclusive",
                                null)),
                        0);
            });
        }
        return requests.getChildren(path).thenCompose(event -> {
            if (code(event) == KeeperException.Code.NONODE) {
                return CompletableFuture.completedFuture(null);
            }
            if (code(event) != KeeperException.Code.OK) {
                throw failure(event);
            }
            List<Entry> entries = Requests.sortedEntries(event.getChildren());
            List<CompletableFuture<CuratorEvent>> reads = new ArrayList<>();
            for (Entry e : entries) {
                reads.add(requests.getData(path + "/" + e.node(), null));
            }
            return CompletableFuture.allOf(reads.toArray(CompletableFuture[]::new))
                    .thenApply(done -> queueInfo(kind, knownName, entries, reads));
        });
    }

    private static LockInfo queueInfo(
            LockKind kind, String knownName, List<Entry> entries, List<CompletableFuture<CuratorEvent>> reads) {
        List<LockInfo.Holder> holders = new ArrayList<>();
        String name = knownName;
        int live = 0;
        boolean writerSeen = false;
        for (int i = 0; i < entries.size(); i++) {
            CuratorEvent read = reads.get(i).join();
            Data data = code(read) == KeeperException.Code.OK ? Data.parse(read.getData()) : null;
            if (data == null) {
                continue; // gone meanwhile
            }
            if (name == null) {
                name = data.name();
            }
            Entry e = entries.get(i);
            boolean holds =
                    switch (e.mode()) {
                        case FAIR -> live == 0;
                        case WRITE -> live == 0 && !QueueRules.downgradeBeside(entries, e);
                        case READ -> !writerSeen || e.downgrade();
                        case PERMIT -> live < data.permits();
                        default -> false;
                    };
            if (e.mode() == Mode.WRITE) {
                writerSeen = true;
            }
            live++;
            if (holds) {
                holders.add(new LockInfo.Holder(
                        e.owner(),
                        data.writeCzxid() > 0 && e.downgrade()
                                ? OrderTokens.ofDowngradedRead(data.writeCzxid())
                                : OrderTokens.ofCreation(read.getStat().getCzxid()),
                        e.mode().name().toLowerCase(),
                        null));
            }
        }
        if (name == null) {
            return null;
        }
        return new LockInfo(name, kind, holders, live - holders.size());
    }

    CompletableFuture<List<LockInfo>> list(String namespace, String prefix) {
        List<CompletableFuture<List<LockInfo>>> kinds = new ArrayList<>();
        for (LockKind kind : LockKind.values()) {
            String dir = NodeLayout.kindDir(namespace, kind);
            kinds.add(requests.getChildren(dir).thenCompose(event -> {
                if (code(event) == KeeperException.Code.NONODE) {
                    return CompletableFuture.completedFuture(List.of());
                }
                if (code(event) != KeeperException.Code.OK) {
                    throw failure(event);
                }
                List<CompletableFuture<LockInfo>> infos = new ArrayList<>();
                for (String segment : event.getChildren()) {
                    if (NodeLayout.isGuard(segment)) {
                        continue;
                    }
                    boolean complete = NodeLayout.isComplete(segment);
                    String name = complete ? NodeLayout.readablePart(segment) : null;
                    if (complete && !name.startsWith(prefix)) {
                        continue;
                    }
                    infos.add(describeAt(kind, dir + "/" + segment, name));
                }
                return CompletableFuture.allOf(infos.toArray(CompletableFuture[]::new))
                        .thenApply(done -> held(infos, prefix));
            }));
        }
        return CompletableFuture.allOf(kinds.toArray(CompletableFuture[]::new)).thenApply(done -> {
            List<LockInfo> all = new ArrayList<>();
            for (CompletableFuture<List<LockInfo>> f : kinds) {
                all.addAll(f.join());
            }
            return all;
        });
    }

    private static List<LockInfo> held(List<CompletableFuture<LockInfo>> infos, String prefix) {
        List<LockInfo> held = new ArrayList<>();
        for (CompletableFuture<LockInfo> f : infos) {
            LockInfo info = f.join();
            if (info != null && !info.holders().isEmpty() && info.name().startsWith(prefix)) {
                held.add(info);
            }
        }
        return held;
    }

    /** Deletes every node of a resource, whoever made it; true if anything was removed. */
    CompletableFuture<Boolean> forceRelease(LockKey key) {
        String resource = NodeLayout.resourcePath(key);
        if (key.mode() == Mode.EXCLUSIVE) {
            return holders.forceDelete(resource);
        }
        return requests.getChildren(resource).thenCompose(event -> {
            if (code(event) == KeeperException.Code.NONODE) {
                return CompletableFuture.completedFuture(false);
            }
            if (code(event) != KeeperException.Code.OK) {
                throw failure(event);
            }
            List<CompletableFuture<Boolean>> deletes = new ArrayList<>();
            for (String child : event.getChildren()) {
                deletes.add(Background.delete(requests.client, resource + "/" + child));
            }
            return CompletableFuture.allOf(deletes.toArray(CompletableFuture[]::new))
                    .thenApply(done -> deletes.stream().anyMatch(CompletableFuture::join));
        });
    }
}
