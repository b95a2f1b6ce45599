package dev.dlock.etcd;

import dev.dlock.etcd.LeaseKeeper.EtcdLease;
import io.etcd.jetcd.KV;
import io.etcd.jetcd.op.Cmp;
import io.etcd.jetcd.op.CmpTarget;
import io.etcd.jetcd.op.Op;
import io.etcd.jetcd.options.DeleteOption;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.ConcurrentHashMap;

/**
 * The keys of ended acquisitions (released, cancelled, given back) until etcd confirms that they are gone.
 *
 * <p>Why: every key is on the client's etcd lease, which lives as long as the client keeps any lock. A key
 * whose delete was lost on its way would keep its lock taken, or its place in the queue, for that long.
 *
 * <p>How: an ended acquisition's key is registered here before its delete is sent, and stays until etcd
 * answers the delete, whether the key was there or not. A delete that failed is sent again when the
 * engine retries the release, and before every keep-alive of the key's etcd lease ({@link #retryOn}): a
 * key can only outlive a failed delete while its lease is kept alive, so the lock is free again at most
 * one keep-alive interval after etcd is reachable. A key also leaves when its etcd lease ends (the key
 * went with it), when the same owner attempts again ({@link #takeOver}), and when the backend closes (its
 * leases are revoked).
 *
 * <p>Never a newer hold: a key whose create revision is known is deleted only while it still has that
 * revision. A key whose write was never answered is deleted by name; its owner id belongs to one
 * acquisition, and a new attempt of that acquisition takes the key over once the delete on its way ended.
 *
 * <p>Concurrency: the map is concurrent; each entry has at most one delete on its way, replaced under the
 * entry's monitor once it has ended (sending is asynchronous: the monitor never waits for etcd).
 */
final class Deletes {
    private final KV kv;
    private final Calls calls;
    private final ConcurrentHashMap<String, Pending> byOwner = new ConcurrentHashMap<>();

    /** One key to delete: its create revision (0 when never learnt), its lease, the delete on its way. */
    private final class Pending {
        final Hold hold;
        final long createRevision;
        final EtcdLease lease;
        private CompletableFuture<Boolean> inFlight;

        Pending(Hold hold, long createRevision, EtcdLease lease) {
            this.hold = hold;
            this.createRevision = createRevision;
            this.lease = lease;
        }

        /** The delete on its way, or a new one: true when the key was there and is now gone. */
        synchronized CompletableFuture<Boolean> send() {
            if (inFlight == null || inFlight.isDone()) {
                CompletableFuture<Boolean> sent = deleteKey(this);
                inFlight = sent;
                sent.thenRun(() -> byOwner.remove(hold.owner, this)); // confirmed either way: done
            }
            return inFlight;
        }

        synchronized CompletableFuture<Boolean> inFlight() {
            return inFlight == null ? CompletableFuture.completedFuture(false) : inFlight;
        }
    }

    Deletes(KV kv, Calls calls) {
        this.kv = kv;
        this.calls = calls;
    }

    /**
     * Deletes an ended acquisition's key until etcd confirms it. Nothing is sent for a key that was never
     * written (no lease) or went with its lease.
     *
     * @return true when the key was there and is gone; failed when etcd did not answer (the key stays
     *     registered and is deleted again later)
     */
    CompletableFuture<Boolean> delete(Hold hold) {
        long createRevision;
        EtcdLease lease;
        synchronized (hold) {
            createRevision = hold.createRevision;
            lease = hold.lease;
        }
        if (lease == null || lease.ended) {
            return CompletableFuture.completedFuture(false);
        }
        Pending pending = new Pending(hold, createRevision, lease);
        byOwner.put(hold.owner, pending);
        return pending.send();
    }

    /**
     * The engine retries a release: sends the owner's unconfirmed delete again.
     *
     * @return the delete's answer, or null when the owner has no unconfirmed delete
     */
    CompletableFuture<Boolean> retry(String owner) {
        Pending pending = byOwner.get(owner);
        if (pending == null) {
            return null;
        }
        if (pending.lease.ended) {
            byOwner.remove(owner, pending);
            return CompletableFuture.completedFuture(false);
        }
        return pending.send();
    }

    /**
     * Before a keep-alive of {@code lease}: sends every unconfirmed delete again, and forgets those whose
     * lease ended (their keys went with it). Answers are not awaited.
     */
    void retryOn(EtcdLease lease) {
        for (Pending pending : byOwner.values()) {
            if (pending.lease.ended) {
                byOwner.remove(pending.hold.owner, pending);
            } else if (pending.lease == lease) {
                pending.send().exceptionally(down -> false);
            }
        }
    }

    /**
     * A new attempt of {@code owner} takes its key over: no more deletes are sent for it, and the attempt
     * waits for the one on its way, so that it cannot remove the key the attempt writes.
     *
     * @return completes when no delete of the owner's key is on its way
     */
    CompletableFuture<Void> takeOver(String owner) {
        Pending pending = byOwner.remove(owner);
        if (pending == null) {
            return CompletableFuture.completedFuture(null);
        }
        return pending.inFlight().handle((deleted, error) -> null);
    }

    /** The backend closed: its leases are revoked with every key on them. */
    void clear() {
        byOwner.clear();
    }

    int size() {
        return byOwner.size();
    }

    private CompletableFuture<Boolean> deleteKey(Pending pending) {
        if (pending.createRevision == 0) {
            return calls.bounded(kv.delete(pending.hold.etcdKey)).thenApply(answer -> answer.getDeleted() > 0);
        }
        Cmp sameKey = new Cmp(pending.hold.etcdKey, Cmp.Op.EQUAL, CmpTarget.createRevision(pending.createRevision));
        Op delete = Op.delete(pending.hold.etcdKey, DeleteOption.DEFAULT);
        return calls.bounded(kv.txn().If(sameKey).Then(delete).commit())
                .thenApply(answer -> answer.isSucceeded()
                        && answer.getDeleteResponses().get(0).getDeleted() > 0);
    }
}
