package dev.dlock.etcd;

import dev.dlock.etcd.LeaseKeeper.EtcdLease;
import dev.dlock.spi.RenewRequest;
import io.etcd.jetcd.ByteSequence;
import io.etcd.jetcd.KV;
import io.etcd.jetcd.KeyValue;
import io.etcd.jetcd.op.Cmp;
import io.etcd.jetcd.op.CmpTarget;
import io.etcd.jetcd.op.Op;
import io.etcd.jetcd.options.GetOption;
import io.etcd.jetcd.options.PutOption;
import java.util.ArrayList;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;
import java.util.Set;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.ConcurrentHashMap;

/**
 * One renewal tick: a keep-alive per etcd lease in the batch (one in the steady state, whatever the
 * number of holds), and in parallel one transaction per 100 holds that compares every key's create
 * revision, answering the keys only when a comparison fails. A hold whose key is gone (force-released) or
 * whose lease ended is reported lost. A hold renewed with a lease time longer than its etcd lease's TTL
 * ({@code Lease.extend}) has its key moved onto a long enough lease (a put keeps the create revision, so
 * the fencing token and the place in the queue stay).
 *
 * <p>A renewal confirms holds and keeps the etcd lease alive; it keeps no expiry of its own (the engine's
 * watchdog counts each lease's time from the renewal's send). It first ends every etcd lease already past
 * its local deadline ({@link LeaseKeeper#endStale}).
 */
final class Renewal {
    private static final int CHUNK = 100;

    private final Holds holds;
    private final LeaseKeeper keeper;
    private final KV kv;
    private final Calls calls;
    private final List<RenewRequest> batch;
    private final Set<String> lost = ConcurrentHashMap.newKeySet();

    Renewal(Holds holds, LeaseKeeper keeper, KV kv, Calls calls, List<RenewRequest> batch) {
        this.holds = holds;
        this.keeper = keeper;
        this.kv = kv;
        this.calls = calls;
        this.batch = batch;
    }

    private record Item(Hold hold, RenewRequest request, long createRevision, EtcdLease lease, ByteSequence value) {}

    CompletableFuture<Set<String>> run() {
        keeper.endStale();
        List<Item> items = new ArrayList<>();
        Map<EtcdLease, List<Item>> byLease = new LinkedHashMap<>();
        for (RenewRequest request : batch) {
            Hold hold = holds.get(request.owner());
            Item item = null;
            if (hold != null) {
                synchronized (hold) {
                    if (hold.state == Hold.State.HELD && hold.lease != null && !hold.lease.ended) {
                        item = new Item(hold, request, hold.createRevision, hold.lease, hold.value);
                    }
                }
            }
            if (item == null) {
                lost.add(request.owner());
            } else {
                items.add(item);
                byLease.computeIfAbsent(item.lease(), l -> new ArrayList<>()).add(item);
            }
        }
        if (items.isEmpty()) {
            return CompletableFuture.completedFuture(lost);
        }
        List<CompletableFuture<?>> steps = new ArrayList<>();
        byLease.forEach((lease, on) -> steps.add(keeper.keepAlive(lease).thenAccept(alive -> {
            if (!alive) {
                on.forEach(item -> lost.add(item.request().owner()));
            }
        })));
        for (int i = 0; i < items.size(); i += CHUNK) {
            steps.add(check(items.subList(i, Math.min(items.size(), i + CHUNK))));
        }
        return CompletableFuture.allOf(steps.toArray(CompletableFuture[]::new))
                .thenCompose(done -> moves(items))
                .thenApply(done -> {
                    for (Item item : items) {
                        if (lost.contains(item.request().owner())) {
                            holds.lost(item.hold());
                        }
                    }
                    return lost;
                });
    }

    /** One transaction: do all these keys still exist with their create revisions? */
    private CompletableFuture<Void> check(List<Item> chunk) {
        Cmp[] compares = new Cmp[chunk.size()];
        Op[] reads = new Op[chunk.size()];
        for (int i = 0; i < chunk.size(); i++) {
            Item item = chunk.get(i);
            compares[i] = new Cmp(item.hold().etcdKey, Cmp.Op.EQUAL, CmpTarget.createRevision(item.createRevision()));
            reads[i] = Op.get(
                    item.hold().etcdKey, GetOption.builder().withKeysOnly(true).build());
        }
        return calls.bounded(kv.txn().If(compares).Else(reads).commit()).thenAccept(answer -> {
            if (answer.isSucceeded()) {
                return;
            }
            for (int i = 0; i < chunk.size(); i++) {
                List<KeyValue> kvs = answer.getGetResponses().get(i).getKvs();
                if (kvs.isEmpty()
                        || kvs.get(0).getCreateRevision() != chunk.get(i).createRevision()) {
                    lost.add(chunk.get(i).request().owner());
                }
            }
        });
    }

    /** Moves the keys of holds that now need a longer etcd lease than theirs. */
    private CompletableFuture<Void> moves(List<Item> items) {
        List<CompletableFuture<?>> moves = new ArrayList<>();
        for (Item item : items) {
            if (item.request().leaseMillis() > item.lease().ttlMillis
                    && !lost.contains(item.request().owner())) {
                moves.add(move(item));
            }
        }
        return CompletableFuture.allOf(moves.toArray(CompletableFuture[]::new));
    }

    private CompletableFuture<Void> move(Item item) {
        ByteSequence key = item.hold().etcdKey;
        return keeper.leaseFor(item.request().leaseMillis()).thenCompose(to -> calls.bounded(kv.txn()
                        .If(new Cmp(key, Cmp.Op.EQUAL, CmpTarget.createRevision(item.createRevision())))
                        .Then(Op.put(
                                key,
                                item.value(),
                                PutOption.builder().withLeaseId(to.id).build()))
                        .commit())
                .thenAccept(answer -> {
                    if (!answer.isSucceeded()) {
                        lost.add(item.request().owner());
                        return;
                    }
                    Hold hold = item.hold();
                    synchronized (hold) {
                        if (hold.state == Hold.State.HELD && hold.lease == item.lease()) {
                            item.lease().holds.decrementAndGet();
                            to.holds.incrementAndGet();
                            hold.lease = to;
                        }
                    }
                }));
    }
}
