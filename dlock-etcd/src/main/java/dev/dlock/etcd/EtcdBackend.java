package dev.dlock.etcd;

import static dev.dlock.etcd.KeyLayout.Wait;

import dev.dlock.LockBackendException;
import dev.dlock.LockInfo;
import dev.dlock.etcd.KeyLayout.Entry;
import dev.dlock.etcd.LeaseKeeper.EtcdLease;
import dev.dlock.spi.AcquireRequest;
import dev.dlock.spi.AcquireResult;
import dev.dlock.spi.BackendContext;
import dev.dlock.spi.LockBackend;
import dev.dlock.spi.LockKey;
import dev.dlock.spi.RenewRequest;
import dev.dlock.spi.WakeListener;
import io.etcd.jetcd.ByteSequence;
import io.etcd.jetcd.Client;
import io.etcd.jetcd.KV;
import io.etcd.jetcd.KeyValue;
import io.etcd.jetcd.op.Op;
import io.etcd.jetcd.options.GetOption;
import io.etcd.jetcd.options.PutOption;
import java.time.Duration;
import java.util.List;
import java.util.Set;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.CompletionStage;
import java.util.concurrent.ConcurrentHashMap;
import java.util.concurrent.RejectedExecutionException;
import java.util.concurrent.ScheduledThreadPoolExecutor;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.atomic.AtomicBoolean;
import java.util.concurrent.atomic.AtomicInteger;

/**
 * The etcd backend: every SPI primitive as jetcd KV, Watch and Lease requests.
 *
 * <p>Recipe (keys and values: {@link KeyLayout}): an acquisition's first attempt writes its key, on the
 * client's etcd lease, in one transaction that also reads the resource's queue ordered by create revision;
 * later attempts of a waiting acquisition only read the queue. The acquisition holds when the queue read
 * shows its own key in a holding place, so a grant always re-checks, in the same read, that the key still
 * exists (a key lost with its lease while waiting is never granted). The fencing token is the key's create
 * revision. A waiter that does not hold watches the one key it waits for (its predecessor, or for a read
 * the nearest earlier write) from the revision after its read, so a release wakes one waiter; a semaphore
 * waiter watches the resource's deletions. A try without waiting deletes its key before answering busy.
 *
 * <p>Leases: one etcd lease per client ({@link LeaseKeeper}); {@link #renew} sends one keep-alive per lease
 * in the batch (one in the steady state) and, in the same tick, one transaction that checks that every
 * renewed key still exists with its create revision (so a force-release is noticed). A hold whose lease
 * time passes without renewal is deleted by this client; a lease that ends marks every hold lost.
 *
 * <p>Concurrency: jetcd completes futures on its executor; per-acquisition state ({@link Hold}) is guarded
 * by the hold's monitor, held only for field updates. A timer thread runs lease deadlines and hold expiry.
 *
 * <p>Failure modes: every request is bounded by the operation timeout ({@link Calls}). A write whose
 * answer is lost may still land; the key name is unique to the acquisition, so a release deletes it by
 * name, and once more after twice the operation timeout when its create revision was never learnt.
 */
final class EtcdBackend implements LockBackend, LeaseKeeper.Listener {
    private static final AtomicInteger INSTANCES = new AtomicInteger();
    /** The least time the first open in a JVM gets (see {@link #open}). */
    static final Duration FIRST_CONNECT = Duration.ofSeconds(15);
    /** Whether an open (successful or not) has loaded jetcd's request path in this JVM. */
    private static final AtomicBoolean STACK_LOADED = new AtomicBoolean();

    private static final GetOption QUEUE = GetOption.builder()
            .isPrefix(true)
            .withSortField(GetOption.SortTarget.CREATE)
            .withSortOrder(GetOption.SortOrder.ASCEND)
            .build();

    private final Client client;
    private final boolean ownsClient;
    private final String prefix;
    private final BackendContext.BackendEvents events;
    private final Calls calls;
    private final KV kv;
    private final ScheduledThreadPoolExecutor timer;
    private final LeaseKeeper keeper;
    private final Waits waits;
    private final EtcdAdmin admin;
    /** Every acquisition with a key (or a key write in flight), by owner id. */
    private final ConcurrentHashMap<String, Hold> holds = new ConcurrentHashMap<>();

    private volatile boolean closed;

    private EtcdBackend(Client client, boolean ownsClient, String prefix, BackendContext context) {
        this.client = client;
        this.ownsClient = ownsClient;
        this.prefix = prefix;
        this.events = context.events();
        this.calls = new Calls(context.operationTimeout());
        this.kv = client.getKVClient();
        int id = INSTANCES.incrementAndGet();
        this.timer = new ScheduledThreadPoolExecutor(1, r -> {
            Thread t = new Thread(r, "dlock-etcd-timer-" + id);
            t.setDaemon(true);
            return t;
        });
        timer.setRemoveOnCancelPolicy(true);
        this.keeper = new LeaseKeeper(client.getLeaseClient(), calls, timer, this);
        this.waits = new Waits(client.getWatchClient());
        this.admin = new EtcdAdmin(kv, client.getLeaseClient(), calls, prefix, holds);
    }

    /**
     * Opens a backend, checking within the operation timeout that the cluster answers reads. The first
     * open in a JVM gets at least {@link #FIRST_CONNECT}: its first request also loads and initialises
     * jetcd's gRPC, Netty and Vert.x code (measured 1 to 5 s on a loaded two-core machine), which is not
     * the store's time.
     */
    static EtcdBackend open(Client client, boolean ownsClient, String prefix, BackendContext context) {
        Duration budget = context.operationTimeout();
        if (!STACK_LOADED.get() && budget.compareTo(FIRST_CONNECT) < 0) {
            budget = FIRST_CONNECT;
        }
        try {
            new Calls(budget)
                    .bounded(client.getKVClient()
                            .get(
                                    KeyLayout.bytes(prefix.isEmpty() ? "dlock" : prefix),
                                    GetOption.builder().withCountOnly(true).build()))
                    .join();
        } catch (RuntimeException e) {
            if (ownsClient) {
                client.close();
            }
            Throwable cause = Calls.unwrap(e);
            String why = cause instanceof LockBackendException ? cause.getMessage() : cause.toString();
            throw new LockBackendException("could not reach etcd within " + budget + ": " + why, cause);
        } finally {
            STACK_LOADED.set(true);
        }
        return new EtcdBackend(client, ownsClient, prefix, context);
    }

    // ---- per-acquisition state

    /** A queue read: the store revision it was made at and the resource's keys. */
    private record View(long revision, List<KeyValue> kvs) {}

    // ---- acquire

    @Override
    public CompletionStage<AcquireResult> acquire(AcquireRequest request) {
        if (closed) {
            return CompletableFuture.failedFuture(new IllegalStateException("the etcd backend is closed"));
        }
        Hold hold = holds.computeIfAbsent(
                request.owner(), owner -> new Hold(request.key(), owner, KeyLayout.resourceDir(prefix, request.key())));
        return attempt(hold, request, 0);
    }

    private CompletableFuture<AcquireResult> attempt(Hold hold, AcquireRequest request, int tries) {
        long sent = System.nanoTime();
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
        return view.thenCompose(v -> decide(hold, request, v, sent, tries));
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
                        .Then(Op.put(hold.etcdKey, value, onLease), Op.get(hold.dir, QUEUE))
                        .commit())
                .thenApply(answer -> new View(
                        answer.getHeader().getRevision(),
                        answer.getGetResponses().get(0).getKvs()));
    }

    private CompletableFuture<View> read(Hold hold) {
        return calls.bounded(kv.get(hold.dir, QUEUE))
                .thenApply(answer -> new View(answer.getHeader().getRevision(), answer.getKvs()));
    }

    /** Decides from a queue read: granted, busy and watching, or busy without a key. */
    private CompletableFuture<AcquireResult> decide(
            Hold hold, AcquireRequest request, View view, long sent, int tries) {
        List<Entry> queue = KeyLayout.queue(view.kvs());
        int index = -1;
        for (int i = 0; i < queue.size(); i++) {
            if (queue.get(i).owner().equals(hold.owner)) {
                index = i;
                break;
            }
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
                    hold.expiresAtNanos = sent + TimeUnit.MILLISECONDS.toNanos(request.leaseMillis());
                } else if (request.waiting()) {
                    hold.state = Hold.State.WAITING;
                }
            }
        }
        if (ended) { // released or cancelled while this attempt was on its way
            return deleteKey(hold).thenApply(deleted -> AcquireResult.busy(-1));
        }
        if (index < 0) {
            if (request.waiting() && tries < 2) {
                return attempt(hold, request, tries + 1);
            }
            if (!request.waiting()) {
                forget(hold);
            }
            return CompletableFuture.completedFuture(AcquireResult.busy(0));
        }
        if (wait == Wait.NONE) {
            waits.stop(hold.owner);
            scheduleExpiry(hold, sent + TimeUnit.MILLISECONDS.toNanos(request.leaseMillis()));
            return CompletableFuture.completedFuture(
                    AcquireResult.granted(queue.get(index).createRevision()));
        }
        if (!request.waiting()) {
            forget(hold);
            return deleteKey(hold).thenApply(deleted -> AcquireResult.busy(-1));
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

    // ---- release, cancel, expiry

    @Override
    public CompletionStage<Boolean> release(LockKey key, String owner) {
        Hold hold = holds.get(owner);
        if (hold == null) {
            return CompletableFuture.completedFuture(false);
        }
        boolean held;
        boolean known;
        synchronized (hold) {
            held = hold.end();
            known = hold.createRevision != 0;
        }
        forget(hold);
        if (!known) {
            // The key write may still be on its way: delete now and once more when it cannot be any longer.
            schedule(() -> deleteKey(hold), 2 * calls.timeoutMillis());
        }
        return deleteKey(hold).thenApply(deleted -> deleted && held);
    }

    @Override
    public CompletionStage<Void> cancelWait(LockKey key, String owner) {
        return release(key, owner).thenApply(ignored -> null);
    }

    private CompletableFuture<Boolean> deleteKey(Hold hold) {
        return calls.bounded(kv.delete(hold.etcdKey)).thenApply(answer -> answer.getDeleted() > 0);
    }

    private void forget(Hold hold) {
        holds.remove(hold.owner, hold);
        waits.stop(hold.owner);
    }

    private void scheduleExpiry(Hold hold, long atNanos) {
        schedule(() -> expire(hold), TimeUnit.NANOSECONDS.toMillis(atNanos - System.nanoTime()) + 1);
    }

    /** A hold whose lease time passed without renewal (the engine stopped renewing it) gives its key up. */
    private void expire(Hold hold) {
        long due;
        synchronized (hold) {
            if (hold.state != Hold.State.HELD) {
                return;
            }
            due = hold.expiresAtNanos;
            if (System.nanoTime() - due >= 0) {
                hold.end();
            }
        }
        if (System.nanoTime() - due < 0) {
            scheduleExpiry(hold, due);
            return;
        }
        forget(hold);
        deleteKey(hold).exceptionally(error -> false);
    }

    private void schedule(Runnable task, long delayMillis) {
        try {
            timer.schedule(task, Math.max(0, delayMillis), TimeUnit.MILLISECONDS);
        } catch (RejectedExecutionException closing) {
            // closed: the lease revocation removes the keys
        }
    }

    // ---- renew and lease loss

    @Override
    public CompletionStage<Set<String>> renew(List<RenewRequest> batch) {
        return new Renewal(this, batch).run();
    }

    Hold hold(String owner) {
        return holds.get(owner);
    }

    LeaseKeeper keeper() {
        return keeper;
    }

    KV kv() {
        return kv;
    }

    Calls calls() {
        return calls;
    }

    /** A renewal found a hold gone or its lease ended: it is lost and its key may go. */
    void lost(Hold hold) {
        synchronized (hold) {
            hold.end();
        }
        forget(hold);
    }

    /** A renewal confirmed a hold: its lease time counts from when the renewal was sent. */
    void renewed(Hold hold, long expiresAtNanos) {
        synchronized (hold) {
            if (hold.state == Hold.State.HELD) {
                hold.expiresAtNanos = expiresAtNanos;
            }
        }
    }

    @Override
    public void leaseEnded(EtcdLease lease, String reason) {
        boolean anyHeld = false;
        for (Hold hold : holds.values()) {
            boolean held = false;
            synchronized (hold) {
                if (hold.lease == lease) {
                    if (hold.state == Hold.State.HELD) {
                        held = hold.end();
                    } else if (hold.state != Hold.State.ENDED) {
                        hold.createRevision = 0; // its key goes with the lease: queue again on a new one
                    }
                }
            }
            if (held) {
                anyHeld = true;
                forget(hold);
            }
        }
        if (anyHeld && !closed) {
            events.allLeasesLost(reason);
        }
    }

    @Override
    public boolean leasesValid() {
        return !closed && keeper.leasesValid();
    }

    // ---- wake-ups

    @Override
    public CompletionStage<Subscription> subscribe(LockKey key, WakeListener listener) {
        ByteSequence dir = KeyLayout.resourceDir(prefix, key);
        waits.listeners(dir).add(listener);
        return CompletableFuture.completedFuture(() -> waits.remove(dir, listener));
    }

    // ---- administration

    @Override
    public CompletionStage<LockInfo> describe(LockKey key) {
        return admin.describe(key);
    }

    @Override
    public CompletionStage<List<LockInfo>> list(String namespace, String namePrefix) {
        return admin.list(namespace, namePrefix);
    }

    @Override
    public CompletionStage<Boolean> forceRelease(LockKey key) {
        return admin.forceRelease(key);
    }

    @Override
    public void close() {
        if (closed) {
            return;
        }
        closed = true;
        waits.close();
        keeper.revokeAll();
        timer.shutdownNow();
        if (ownsClient) {
            client.close();
        }
    }

    @Override
    public String toString() {
        return "EtcdBackend[prefix '" + prefix + "', " + holds.size() + " keys]";
    }
}
