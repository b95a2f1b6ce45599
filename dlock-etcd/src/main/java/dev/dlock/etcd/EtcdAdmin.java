package dev.dlock.etcd;

import dev.dlock.LockInfo;
import dev.dlock.LockKind;
import dev.dlock.etcd.KeyLayout.Entry;
import dev.dlock.spi.LockKey;
import io.etcd.jetcd.ByteSequence;
import io.etcd.jetcd.KV;
import io.etcd.jetcd.KeyValue;
import io.etcd.jetcd.Lease;
import io.etcd.jetcd.options.DeleteOption;
import io.etcd.jetcd.options.LeaseOption;
import java.nio.charset.StandardCharsets;
import java.time.Duration;
import java.util.ArrayList;
import java.util.HashMap;
import java.util.LinkedHashMap;
import java.util.LinkedHashSet;
import java.util.List;
import java.util.Map;
import java.util.Set;
import java.util.concurrent.CompletableFuture;

/**
 * {@code describe}, {@code list} and {@code forceRelease}: reads of the key layout, and one prefix delete.
 *
 * <p>Who holds is decided by the same rule as for acquisitions ({@link KeyLayout#holds}); the time left of
 * a hold is the time left on its etcd lease: for a hold of this client, until its lease's local deadline
 * (no request), for another client's the TTL the server reports (one {@code LeaseTimeToLive} per
 * distinct lease). {@code list} reads one key range per kind,
 * narrowed to the name prefix (the name encoding keeps prefixes).
 */
final class EtcdAdmin {
    private final KV kv;
    private final Lease leases;
    private final Calls calls;
    private final String prefix;
    private final Map<String, Hold> holds;

    EtcdAdmin(KV kv, Lease leases, Calls calls, String prefix, Map<String, Hold> holds) {
        this.kv = kv;
        this.leases = leases;
        this.calls = calls;
        this.prefix = prefix;
        this.holds = holds;
    }

    CompletableFuture<LockInfo> describe(LockKey key) {
        return calls.bounded(kv.get(KeyLayout.resourceDir(prefix, key), KeyLayout.QUEUE_READ))
                .thenCompose(answer -> infos(key.kind(), Map.of(key.name(), KeyLayout.queue(answer.getKvs())), true))
                .thenApply(
                        infos -> infos.isEmpty() ? new LockInfo(key.name(), key.kind(), List.of(), 0) : infos.get(0));
    }

    CompletableFuture<List<LockInfo>> list(String namespace, String namePrefix) {
        List<CompletableFuture<List<LockInfo>>> perKind = new ArrayList<>();
        for (LockKind kind : LockKind.values()) {
            String dir = KeyLayout.namespaceDir(prefix, namespace) + kind.tag() + "/";
            ByteSequence from = KeyLayout.bytes(dir + KeyLayout.encodeName(namePrefix));
            perKind.add(calls.bounded(kv.get(from, KeyLayout.QUEUE_READ)).thenCompose(answer -> {
                Map<String, List<KeyValue>> byName = new LinkedHashMap<>();
                for (KeyValue kv : answer.getKvs()) {
                    String rest = kv.getKey().toString(StandardCharsets.UTF_8).substring(dir.length());
                    int slash = rest.indexOf('/');
                    if (slash > 0) {
                        byName.computeIfAbsent(KeyLayout.decodeName(rest.substring(0, slash)), n -> new ArrayList<>())
                                .add(kv);
                    }
                }
                Map<String, List<Entry>> queues = new LinkedHashMap<>();
                byName.forEach((name, kvs) -> queues.put(name, KeyLayout.queue(kvs)));
                return infos(kind, queues, false);
            }));
        }
        return CompletableFuture.allOf(perKind.toArray(CompletableFuture[]::new))
                .thenApply(done -> {
                    List<LockInfo> all = new ArrayList<>();
                    perKind.forEach(f -> all.addAll(f.join()));
                    return all;
                });
    }

    CompletableFuture<Boolean> forceRelease(LockKey key) {
        return calls.bounded(kv.delete(
                        KeyLayout.resourceDir(prefix, key),
                        DeleteOption.builder().isPrefix(true).build()))
                .thenApply(answer -> answer.getDeleted() > 0);
    }

    /** The descriptions of the resources with at least one holder (or of every one when {@code all}). */
    private CompletableFuture<List<LockInfo>> infos(LockKind kind, Map<String, List<Entry>> queues, boolean all) {
        Set<Long> remoteLeases = new LinkedHashSet<>();
        queues.values().forEach(queue -> {
            for (int i = 0; i < queue.size(); i++) {
                if (KeyLayout.holds(queue, i) && !holds.containsKey(queue.get(i).owner())) {
                    remoteLeases.add(queue.get(i).lease());
                }
            }
        });
        Map<Long, CompletableFuture<Long>> ttls = new HashMap<>();
        for (long lease : remoteLeases) {
            ttls.put(
                    lease,
                    lease == 0
                            ? CompletableFuture.completedFuture(-1L)
                            : calls.bounded(leases.timeToLive(lease, LeaseOption.DEFAULT))
                                    .thenApply(answer -> answer.getTTL()));
        }
        return CompletableFuture.allOf(ttls.values().toArray(CompletableFuture[]::new))
                .thenApply(done -> {
                    List<LockInfo> infos = new ArrayList<>();
                    queues.forEach((name, queue) -> {
                        List<LockInfo.Holder> holders = new ArrayList<>();
                        for (int i = 0; i < queue.size(); i++) {
                            Entry e = queue.get(i);
                            if (KeyLayout.holds(queue, i)) {
                                holders.add(new LockInfo.Holder(
                                        e.owner(),
                                        KeyLayout.token(e),
                                        e.mode().name().toLowerCase(java.util.Locale.ROOT),
                                        expiresIn(e, ttls)));
                            }
                        }
                        if (all || !holders.isEmpty()) {
                            infos.add(new LockInfo(name, kind, holders, queue.size() - holders.size()));
                        }
                    });
                    return infos;
                });
    }

    private Duration expiresIn(Entry e, Map<Long, CompletableFuture<Long>> ttls) {
        Hold local = holds.get(e.owner());
        if (local != null) {
            LeaseKeeper.EtcdLease lease;
            synchronized (local) {
                lease = local.lease;
            }
            long at = lease == null ? System.nanoTime() : lease.validUntilNanos;
            return Duration.ofNanos(Math.max(0, at - System.nanoTime()));
        }
        long seconds = ttls.get(e.lease()).join();
        return seconds < 0 ? Duration.ZERO : Duration.ofSeconds(seconds);
    }
}
