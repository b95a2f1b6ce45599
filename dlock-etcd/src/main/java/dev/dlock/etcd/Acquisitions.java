package dev.dlock.etcd;

import static dev.dlock.etcd.KeyLayout.Wait;

import dev.dlock.LockBackendException;
import dev.dlock.etcd.KeyLayout.Entry;
import dev.dlock.etcd.LeaseKeeper.EtcdLease;
import dev.dlock.spi.AcquireRequest;
import dev.dlock.spi.AcquireResult;
import io.etcd.jetcd.ByteSequence;
import io.etcd.jetcd.KV;
import io.etcd.jetcd.KeyValue;
import io.etcd.jetcd.op.Op;
import io.etcd.jetcd.options.PutOption;
import java.util.List;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.TimeUnit;

/**
 * The acquire and release recipe: one key per acquisition, on the client's etcd lease, ordered by create
 * revision (keys and values: {@link KeyLayout}).
 *
 * <p>Acquire: the first attempt writes the key and reads the resource's queue in one transaction; later
 * attempts of a waiting acquisition only read the queue. The acquisition holds when the read shows its own
 * key in a holding place, so a grant always re-checks, in the same read, that the key still exists (a key
 * lost with its lease while waiting is never granted). The fencing token is the key's create revision,
 * scaled, or for a downgrade's read the last value of its write's room ({@link KeyLayout#token}); a
 * downgrade whose write key is gone from the read (its lease ended, or force-released) fails instead of
 * holding at the write's place beside a writer granted since. A waiter that does not hold watches the one
 * key it waits for ({@link Waits}) from the revision after its read; a try without waiting deletes its key
 * before answering busy.
 *
 * <p>Release (and a cancelled wait, a try that finds the lock busy, an attempt answered after its end): the
 * key is deleted by {@link Deletes}, which keeps it until etcd confirms the delete, so a delete lost on its
 * way cannot leave the key on the client's etcd lease for as long as the client keeps other locks. A write
 * whose answer was lost may still land, so when the key's create revision was never learnt the key is
 * deleted once more after twice the operation timeout.
 *
 * <p>Time: nothing here keeps a hold's expiry. A grant counts on the etcd lease being fresh (refreshed when
 * older than a third of its TTL); the engine's watchdog decides when the hold's time is over.
 *
 * <p>Concurrency: jetcd completes futures on its executor; a hold's fields change under its monitor, held
 * only for field updates.
 */
final class Acquisitions {
    private final KV kv;
    private final Calls calls;
    private final LeaseKeeper keeper;
    private final Waits waits;
    private final Holds holds;
    private final Deletes deletes;
    /** Set when the backend closes: its leases are revoked, so no late delete is needed. */
    private volatile boolean closed;

    Acquisitions(KV kv, Calls calls, LeaseKeeper keeper, Waits waits, Holds holds, Deletes deletes) {
        this.kv = kv;
        this.calls = calls;
        this.keeper = keeper;
        this.waits = waits;
        this.holds = holds;
        this.deletes = deletes;
    }

    /** A queue read: the store revision it was made at and the resource's keys. */
    private record View(long revision, List<KeyValue> kvs) {}

    CompletableFuture<AcquireResult> acquire(AcquireRequest request) {
        // A new attempt of an owner whose key is still to be deleted (a late grant given back) owns the key
        // from now on; its write waits for a delete on its way.
        return deletes.takeOver(request.owner()).thenCompose(none -> attempt(holds.of(request), request, 0));
    }

    private CompletableFuture<AcquireResult> attempt(Hold hold, AcquireRequest request, int tries) {
        EtcdLease lease;
        boolean haveKey;
        synchronized (hold) {
            if (hold.state == Hold.State.ENDED) {
                return CompletableFuture.completedFuture(AcquireResult.busy(-1));
            }
            lease = hold.lease;
            haveKey = hold.createRevision != 0 && lease != null && !lease.ended;
        }
        CompletableFuture<View> view = haveKey
                ? keeper.fresh(lease).thenCompose(live -> live != null ? read(hold) : createOnLease(hold, request))
                : createOnLease(hold, request);
        return view.thenCompose(v -> decide(hold, request, v, tries));
    }

    private CompletableFuture<View> createOnLease(Hold hold, AcquireRequest request) {
        return keeper.leaseFor(request.leaseMillis())
                .thenCompose(lease -> create(hold, request, lease).handle((view, error) -> {
                    if (error == null) {
                        return CompletableFuture.completedFuture(view);
                    }
                    if (!Calls.leaseNotFound(error)) {
                        return CompletableFuture.<View>failedFuture(error);
                    }
                    // The server dropped the lease before this client noticed: end it and write on a new one.
                    keeper.end(lease, "the etcd " + lease + " was not found on the server (expired or revoked)");
                    return keeper.leaseFor(request.leaseMillis()).thenCompose(next -> create(hold, request, next));
                }))
                .thenCompose(view -> view);
    }

    /** Writes the acquisition's key on the lease (or moves it there) and reads the queue, in one txn. */
    private CompletableFuture<View> create(Hold hold, AcquireRequest request, EtcdLease lease) {
        long sortRevision = 0;
        if (request.downgradeFrom() != null) {
            Hold write = holds.get(request.downgradeFrom());
            if (write != null) {
                synchronized (write) {
                    sortRevision = write.createRevision;
                }
            }
        }
        ByteSequence value = KeyLayout.value(request.key().mode(), request.permits(), sortRevision);
        synchronized (hold) {
            hold.value = value;
            hold.lease = lease;
        }
        PutOption onLease = PutOption.builder().withLeaseId(lease.id).build();
        return calls.bounded(kv.txn()
                        .Then(Op.put(hold.etcdKey, value, onLease), Op.get(hold.dir, KeyLayout.QUEUE_READ))
                        .commit())
                .thenApply(answer -> new View(
                        answer.getHeader().getRevision(),
                        answer.getGetResponses().get(0).getKvs()));
    }

    private CompletableFuture<View> read(Hold hold) {
        return calls.bounded(kv.get(hold.dir, KeyLayout.QUEUE_READ))
                .thenApply(answer -> new View(answer.getHeader().getRevision(), answer.getKvs()));
    }

    /** Decides from a queue read: granted, busy and watching, or busy without a key. */
    private CompletableFuture<AcquireResult> decide(Hold hold, AcquireRequest request, View view, int tries) {
        List<Entry> queue = KeyLayout.queue(view.kvs());
        int index = -1;
        for (int i = 0; i < queue.size(); i++) {
            if (queue.get(i).owner().equals(hold.owner)) {
                index = i;
                break;
            }
        }
        if (index >= 0 && KeyLayout.downgradeWithoutItsWrite(queue, index)) {
            return refuseDowngrade(hold, request);
        }
        Wait wait = index < 0 ? null : KeyLayout.waitOf(queue, index, request.permits());
        boolean ended;
        synchronized (hold) {
            ended = hold.state == Hold.State.ENDED;
            if (hold.lease == null || hold.lease.ended) {
                index = -1; // the key's lease ended meanwhile: the key goes with it, so never grant on it
            }
            if (!ended && index < 0) {
                hold.createRevision = 0; // gone with its lease, or force-released: queue again
                hold.state = Hold.State.NEW;
            } else if (!ended) {
                hold.createRevision = queue.get(index).createRevision();
                if (wait == Wait.NONE) {
                    hold.state = Hold.State.HELD;
                    hold.lease.holds.incrementAndGet();
                } else if (request.waiting()) {
                    hold.state = Hold.State.WAITING;
                }
            }
        }
        if (ended) { // released or cancelled while this attempt was on its way
            if (index >= 0) {
                synchronized (hold) {
                    hold.createRevision = queue.get(index).createRevision(); // delete only this key
                }
            }
            return deletes.delete(hold).thenApply(deleted -> AcquireResult.busy(-1));
        }
        if (index < 0) {
            if (request.waiting() && tries < 2) {
                return attempt(hold, request, tries + 1);
            }
            if (!request.waiting()) {
                holds.forget(hold);
            }
            return CompletableFuture.completedFuture(AcquireResult.busy(0));
        }
        if (wait == Wait.NONE) {
            waits.stop(hold.owner);
            return CompletableFuture.completedFuture(AcquireResult.granted(KeyLayout.token(queue.get(index))));
        }
        if (!request.waiting()) {
            holds.forget(hold);
            return deletes.delete(hold).thenApply(deleted -> AcquireResult.busy(-1));
        }
        ByteSequence target = wait == Wait.KEY
                ? KeyLayout.entryKey(hold.dir, KeyLayout.blocker(queue, index).owner())
                : null;
        waits.watch(hold, target, view.revision() + 1);
        EtcdLease lease;
        synchronized (hold) {
            lease = hold.lease;
        }
        return CompletableFuture.completedFuture(AcquireResult.busy(LeaseKeeper.refreshInMillis(lease)));
    }

    /**
     * Ends a downgrade's read whose write hold the store no longer has, deletes its key and fails: the
     * caller's write hold is gone, so it must not read at the write's place in the queue.
     */
    private CompletableFuture<AcquireResult> refuseDowngrade(Hold hold, AcquireRequest request) {
        synchronized (hold) {
            hold.end();
        }
        holds.forget(hold);
        waits.stop(hold.owner);
        return deletes.delete(hold).thenApply(deleted -> {
            throw new LockBackendException("the write hold on '" + request.key().name()
                    + "' to downgrade from is gone; the read hold was not taken");
        });
    }

    /**
     * Ends the acquisition and deletes its key; true when it held and the key was still there. When the
     * owner has no acquisition any more, this is the engine retrying a release whose delete was not
     * confirmed: that delete is sent again ({@link Deletes}).
     */
    CompletableFuture<Boolean> release(String owner) {
        Hold hold = holds.get(owner);
        if (hold == null) {
            CompletableFuture<Boolean> again = deletes.retry(owner);
            return again != null ? again : CompletableFuture.completedFuture(false);
        }
        boolean held;
        boolean known;
        synchronized (hold) {
            held = hold.end();
            known = hold.createRevision != 0;
        }
        holds.forget(hold);
        if (!known) {
            // The key write may still be on its way: delete now and once more when it cannot be any longer,
            // unless the owner attempted again meanwhile (its new attempt owns the key).
            CompletableFuture.delayedExecutor(2 * calls.timeoutMillis(), TimeUnit.MILLISECONDS)
                    .execute(() -> {
                        if (!closed && holds.get(owner) == null) {
                            deletes.delete(hold).exceptionally(down -> false);
                        }
                    });
        }
        return deletes.delete(hold).thenApply(deleted -> deleted && held);
    }

    void close() {
        closed = true;
        deletes.clear();
    }
}
