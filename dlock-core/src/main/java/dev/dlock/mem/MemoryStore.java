package dev.dlock.mem;

import dev.dlock.LockInfo;
import dev.dlock.LockKind;
import dev.dlock.spi.AcquireRequest;
import dev.dlock.spi.AcquireResult;
import dev.dlock.spi.GrantRules;
import dev.dlock.spi.LockKey;
import dev.dlock.spi.Mode;
import dev.dlock.spi.RenewRequest;
import dev.dlock.spi.WakeListener;
import java.time.Duration;
import java.util.ArrayList;
import java.util.HashMap;
import java.util.HashSet;
import java.util.Iterator;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;
import java.util.Set;
import java.util.concurrent.ConcurrentHashMap;
import java.util.concurrent.CopyOnWriteArrayList;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.locks.ReentrantLock;

/**
 * An in-memory lock store shared by every {@code mem:} client of one JVM that names it: {@code mem:} uses
 * the store named {@code default}, {@code mem:orders} the store named {@code orders}.
 *
 * <p>It has the full semantics of a real store, leases included: a grant not renewed within its lease
 * time expires by this store's clock ({@code System.nanoTime()}). That makes it fit for unit tests of
 * code that uses dlock, and for single-process applications.
 *
 * <p>For tests of failure handling, {@link #goDown()} makes the store stop answering (requests hang, as
 * with a dead server, until the client's operation timeout), and {@link #comeBack()} restores it with its
 * state intact. {@link #forgetEverything()} is the other failure: the store loses every hold and queue
 * entry, as a Redis restarted without persistence does, and then holds grants back as dlock's Redis
 * backend does, so that no client is granted a lock while a lease it forgot may still be running.
 *
 * <pre>{@code
 * MemoryStore store = MemoryStore.named("outage-test");
 * try (LockClient client = LockClient.builder("mem:outage-test")
 *         .operationTimeout(Duration.ofMillis(200)).build()) {
 *     store.goDown();
 *     // client.lock("a").tryAcquire() now throws LockBackendException within 200 ms
 *     store.comeBack();
 * }
 * }</pre>
 *
 * <h2>Design</h2>
 *
 * <p>The store is the reference the contract suite holds every other backend to, so it is built to be
 * obviously right rather than fast: one map from resource (namespace, kind, name) to its holders and its
 * queue, one lock around every primitive, and primitives that run to completion on the caller's thread
 * ({@code MemoryBackend} wraps their results in completed stages). Holders map an owner to its fencing
 * token, mode and expiry; the queue maps an owner to the expiry of its place (fair-lock waiters, and
 * writers waiting on a read-write lock, which read grants then yield to).
 *
 * <p>Invariants:
 *
 * <ul>
 *   <li>Expiry is lazy, as in the real stores (Redis key TTLs, {@code expires_at} columns): each primitive
 *       first drops the expired holders and queue entries of the resource it touches, so an expired
 *       hold is never seen, and there is no timer thread. Times are {@code System.nanoTime()} values
 *       compared by subtraction.
 *   <li>Who may be granted is decided by {@link dev.dlock.spi.GrantRules}, the rules the Java stores
 *       share, from the resource's live holders, its writer and the head of its queue; a grant removes
 *       the caller's own queue entry.
 *   <li>Fencing tokens of a resource only grow: each grant advances its counter by {@link #TOKEN_BLOCK}
 *       (the tokens in between are the engine's for hand-offs without the store). The counters live
 *       apart from the resources and outlive them, so neither a resource emptied and removed nor {@code
 *       forceRelease} makes a token repeat.
 *   <li>A resource without holders and queue entries is removed, so the map does not grow with every
 *       name ever locked (the counters do, by one number per name).
 *   <li>Wake-ups go out after the lock is dropped, on the thread that released; a fair release names the
 *       owner at the head of the queue, the one waiter that can be granted.
 *   <li>Down ({@link #goDown()}) only stops answering: state stays and keeps expiring by the clock, as a
 *       live server's would while the network is cut.
 *   <li>Told first ({@link #forgetEverything()}): the store remembers, per namespace, the longest lease it
 *       granted or renewed ({@link HoldBacks}); after losing its state it grants nothing in a namespace
 *       until that long (plus the drift margin) after the loss, so every forgotten lease has ended by its
 *       holder's clock (and its holder was told at a renewal) before anyone else is granted. A namespace with no grant
 *       before the loss is not held back. Fencing counters survive the loss: tokens never repeat.
 * </ul>
 *
 * <p>Stores are named and shared JVM-wide so that several {@code LockClient}s in one test behave like
 * several processes against one server.
 */
public final class MemoryStore {
    private static final ConcurrentHashMap<String, MemoryStore> STORES = new ConcurrentHashMap<>();

    private final String name;
    private final ReentrantLock lock = new ReentrantLock();
    private final Map<ResourceId, Resource> resources = new HashMap<>();
    /**
     * Tokens each grant reserves ({@code LockBackend.tokenBlock()}): the counter advances by this much,
     * leaving the tokens in between to the holders the engine passes a hold to without the store.
     */
    static final long TOKEN_BLOCK = 1024;

    /** The last token granted per resource: one mutable cell each, so a grant boxes no {@code Long}. */
    private final Map<ResourceId, long[]> lastTokens = new HashMap<>();

    private final Map<ResourceId, List<WakeListener>> listeners = new ConcurrentHashMap<>();
    /** What survives {@link #forgetEverything()}: the hold-back after it. */
    private final HoldBacks holdBacks = new HoldBacks();

    private volatile boolean up = true;

    private MemoryStore(String name) {
        this.name = name;
    }

    /**
     * The store with this name, created on first use. It lives as long as the JVM.
     *
     * @param name any non-empty string
     * @return the store
     */
    public static MemoryStore named(String name) {
        if (name == null || name.isEmpty()) {
            throw new IllegalArgumentException("memory store name must not be null or empty");
        }
        return STORES.computeIfAbsent(name, MemoryStore::new);
    }

    /**
     * The store's name.
     *
     * @return the name given to {@link #named(String)}
     */
    public String name() {
        return name;
    }

    /** Stops answering: every request from now on hangs until {@link #comeBack()}. */
    public void goDown() {
        up = false;
    }

    /** Answers again, with all state as it was (leases keep expiring by the clock meanwhile). */
    public void comeBack() {
        up = true;
    }

    /**
     * Loses every hold and queue entry, as a store restarted without persistence does; the store then holds
     * grants back in every namespace it had granted in, for as long as the longest lease it granted there
     * could still run (plus the drift margin). Clients that held a lease learn at their next renewal that
     * it is lost; waiters wait, and a zero wait answers false, until the hold-back ends.
     */
    public void forgetEverything() {
        lock.lock();
        try {
            holdBacks.lost(System.nanoTime());
            resources.clear();
        } finally {
            lock.unlock();
        }
    }

    @Override
    public String toString() {
        return "MemoryStore[" + name + (up ? "" : ", down") + "]";
    }

    // ---- the primitives, used by MemoryBackend; all synchronous and short

    record ResourceId(String namespace, LockKind kind, String name) {
        static ResourceId of(LockKey key) {
            return new ResourceId(key.namespace(), key.kind(), key.name());
        }
    }

    private static final class Hold {
        final long token;
        final Mode mode;
        long expiresAt;

        Hold(long token, Mode mode, long expiresAt) {
            this.token = token;
            this.mode = mode;
            this.expiresAt = expiresAt;
        }
    }

    private static final class Resource {
        /** Sized for the common one or two holders: a default table would be 16 slots per resource. */
        final LinkedHashMap<String, Hold> holders = new LinkedHashMap<>(2);
        /** Fair-lock queue, or queued writers of a read-write lock: owner to expiry. */
        final LinkedHashMap<String, Long> queue = new LinkedHashMap<>(2);

        /** Drops what expired; an empty map is not even iterated (no garbage on the uncontended path). */
        void purge(long now) {
            if (!holders.isEmpty()) {
                for (Iterator<Hold> it = holders.values().iterator(); it.hasNext(); ) {
                    if (now - it.next().expiresAt >= 0) {
                        it.remove();
                    }
                }
            }
            if (!queue.isEmpty()) {
                for (Iterator<Long> it = queue.values().iterator(); it.hasNext(); ) {
                    if (now - it.next() >= 0) {
                        it.remove();
                    }
                }
            }
        }

        boolean isEmpty() {
            return holders.isEmpty() && queue.isEmpty();
        }

        /** Milliseconds until the first holder or queue entry expires, or -1 when there is none. */
        long earliestExpiry(long now) {
            long min = Long.MAX_VALUE;
            for (Hold h : holders.values()) {
                min = Math.min(min, h.expiresAt - now);
            }
            for (long expiry : queue.values()) {
                min = Math.min(min, expiry - now);
            }
            return min == Long.MAX_VALUE ? -1 : TimeUnit.NANOSECONDS.toMillis(min);
        }

        /** The owner holding in {@link Mode#WRITE}, or {@code null}. */
        String writer() {
            if (holders.isEmpty()) {
                return null;
            }
            for (Map.Entry<String, Hold> e : holders.entrySet()) {
                if (e.getValue().mode == Mode.WRITE) {
                    return e.getKey();
                }
            }
            return null;
        }

        /** The owner of the oldest queue entry, or {@code null}. */
        String firstWaiting() {
            return queue.isEmpty() ? null : queue.keySet().iterator().next();
        }
    }

    boolean up() {
        return up;
    }

    AcquireResult acquire(AcquireRequest request) {
        LockKey key = request.key();
        ResourceId id = ResourceId.of(key);
        long now = System.nanoTime();
        String owner = request.owner();
        lock.lock();
        try {
            long heldBack = holdBacks.heldBackNanos(id.namespace(), now);
            if (heldBack > 0) {
                return AcquireResult.heldBack(ceilMillis(heldBack));
            }
            Resource r = resources.computeIfAbsent(id, k -> new Resource());
            r.purge(now);
            boolean grant = GrantRules.mayGrant(request, r.holders.size(), r.writer(), r.firstWaiting());
            if (grant) {
                long token = nextToken(id);
                holdBacks.leased(id.namespace(), request.leaseMillis());
                r.queue.remove(owner);
                r.holders.put(
                        owner, new Hold(token, key.mode(), now + TimeUnit.MILLISECONDS.toNanos(request.leaseMillis())));
                return AcquireResult.granted(token);
            }
            if (request.waiting() && key.mode().queuesWhileWaiting()) {
                r.queue.put(owner, now + TimeUnit.MILLISECONDS.toNanos(request.queueMillis()));
            }
            long retry = r.earliestExpiry(now);
            if (r.isEmpty()) {
                resources.remove(id);
            }
            return AcquireResult.busy(retry);
        } finally {
            lock.unlock();
        }
    }

    private static long ceilMillis(long nanos) {
        return (nanos + 999_999) / 1_000_000;
    }

    /** Advances the resource's token counter by {@link #TOKEN_BLOCK}; called under the lock. */
    private long nextToken(ResourceId id) {
        long[] last = lastTokens.get(id);
        if (last == null) {
            last = new long[1];
            lastTokens.put(id, last);
        }
        last[0] += TOKEN_BLOCK;
        return last[0];
    }

    boolean release(LockKey key, String owner) {
        ResourceId id = ResourceId.of(key);
        String next;
        lock.lock();
        try {
            Resource r = resources.get(id);
            if (r == null) {
                return false;
            }
            r.purge(System.nanoTime());
            boolean removed = r.holders.remove(owner) != null;
            next = r.queue.isEmpty() || key.mode() != Mode.FAIR
                    ? null
                    : r.queue.keySet().iterator().next();
            if (r.isEmpty()) {
                resources.remove(id);
            }
            if (!removed) {
                return false;
            }
        } finally {
            lock.unlock();
        }
        wake(id, next);
        return true;
    }

    /**
     * Renews holds; a renewal that shortens a hold wakes the resource's waiters, as a release does: they
     * asked while it ran to its old expiry and would wait for that.
     */
    Set<String> renew(List<RenewRequest> batch) {
        Set<String> lost = new HashSet<>();
        List<ResourceId> shortened = null;
        long now = System.nanoTime();
        lock.lock();
        try {
            for (RenewRequest request : batch) {
                ResourceId id = ResourceId.of(request.key());
                Resource r = resources.get(id);
                Hold hold = r == null ? null : r.holders.get(request.owner());
                if (hold == null || now - hold.expiresAt >= 0) {
                    lost.add(request.owner());
                    continue;
                }
                long expiresAt = now + TimeUnit.MILLISECONDS.toNanos(request.leaseMillis());
                if (expiresAt - hold.expiresAt < 0) {
                    shortened = shortened == null ? new ArrayList<>() : shortened;
                    shortened.add(id);
                }
                hold.expiresAt = expiresAt;
                holdBacks.leased(request.key().namespace(), request.leaseMillis());
            }
        } finally {
            lock.unlock();
        }
        if (shortened != null) {
            shortened.forEach(id -> wake(id, null));
        }
        return lost;
    }

    void cancelWait(LockKey key, String owner) {
        ResourceId id = ResourceId.of(key);
        boolean removed;
        lock.lock();
        try {
            Resource r = resources.get(id);
            removed = r != null && r.queue.remove(owner) != null;
            if (r != null && r.isEmpty()) {
                resources.remove(id);
            }
        } finally {
            lock.unlock();
        }
        if (removed) {
            wake(id, null);
        }
    }

    Runnable subscribe(LockKey key, WakeListener listener) {
        ResourceId id = ResourceId.of(key);
        listeners.computeIfAbsent(id, k -> new CopyOnWriteArrayList<>()).add(listener);
        return () -> listeners.computeIfPresent(id, (k, list) -> {
            list.remove(listener);
            return list.isEmpty() ? null : list;
        });
    }

    private void wake(ResourceId id, String nextOwner) {
        List<WakeListener> list = listeners.get(id);
        if (list != null) {
            for (WakeListener l : list) {
                l.wake(nextOwner);
            }
        }
    }

    LockInfo describe(LockKey key) {
        ResourceId id = ResourceId.of(key);
        lock.lock();
        try {
            long now = System.nanoTime();
            LockInfo info = info(id, resources.get(id), now);
            long heldBack = holdBacks.heldBackNanos(id.namespace(), now);
            return heldBack == 0
                    ? info
                    : new LockInfo(
                            info.name(), info.kind(), info.holders(), info.waiters(), Duration.ofNanos(heldBack));
        } finally {
            lock.unlock();
        }
    }

    private static LockInfo info(ResourceId id, Resource r, long now) {
        List<LockInfo.Holder> holders = new ArrayList<>();
        int waiters = 0;
        if (r != null) {
            r.purge(now);
            for (Map.Entry<String, Hold> e : r.holders.entrySet()) {
                Hold h = e.getValue();
                holders.add(new LockInfo.Holder(
                        e.getKey(), h.token, h.mode.name().toLowerCase(), Duration.ofNanos(h.expiresAt - now)));
            }
            waiters = r.queue.size();
        }
        return new LockInfo(id.name(), id.kind(), holders, waiters);
    }

    Duration heldBack(String namespace) {
        lock.lock();
        try {
            return Duration.ofNanos(holdBacks.heldBackNanos(namespace, System.nanoTime()));
        } finally {
            lock.unlock();
        }
    }

    List<LockInfo> list(String namespace, String prefix) {
        List<LockInfo> result = new ArrayList<>();
        long now = System.nanoTime();
        lock.lock();
        try {
            for (Iterator<Map.Entry<ResourceId, Resource>> it =
                            resources.entrySet().iterator();
                    it.hasNext(); ) {
                Map.Entry<ResourceId, Resource> e = it.next();
                ResourceId id = e.getKey();
                if (id.namespace().equals(namespace) && id.name().startsWith(prefix)) {
                    LockInfo info = info(id, e.getValue(), now);
                    if (!info.holders().isEmpty()) {
                        result.add(info);
                    }
                }
            }
        } finally {
            lock.unlock();
        }
        return result;
    }

    boolean forceRelease(LockKey key) {
        ResourceId id = ResourceId.of(key);
        boolean removed;
        lock.lock();
        try {
            Resource r = resources.remove(id);
            removed = r != null && !r.isEmpty();
        } finally {
            lock.unlock();
        }
        if (removed) {
            wake(id, null);
        }
        return removed;
    }
}
