package dev.dlock.internal.wait;

import dev.dlock.LockException;
import dev.dlock.LockRejectedException;
import dev.dlock.internal.base.ListenerEvents;
import dev.dlock.internal.store.Store;
import dev.dlock.spi.LockBackend.Subscription;
import dev.dlock.spi.LockKey;
import dev.dlock.spi.Mode;
import java.util.ArrayDeque;
import java.util.List;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.ConcurrentHashMap;

/**
 * The local tier of the two-tier queue: one {@link LocalQueue} per key with callers of this client waiting
 * for it, and the wake-up subscriptions those queues share ({@link Subscriptions}).
 *
 * <p>A lone caller: the map holds the {@link Acquisition} itself until a second caller comes, the wait
 * needs a wake-up subscription or a hold-back: then it becomes a {@link LocalQueue} holding it. Most names
 * are taken by one caller at a time (one lock per order or job), and that path then costs no queue
 * objects: {@code putIfAbsent} to join, {@code remove(key, acquisition)} to leave.
 *
 * <p>Concurrency: every change to a queue happens inside {@code ConcurrentHashMap.compute} on the map of
 * queues (or is one atomic {@code putIfAbsent}/{@code remove} of a lone caller), which serialises them per
 * key; nothing blocking runs there, and the effects of a change (events, starting the next head, dropping
 * a subscription) run after it. A queue that empties is removed from the map in the same step, and its
 * subscription reference is dropped.
 */
final class LocalQueues {
    /** Heads waiting to be started by the outermost {@link #promote} call on this thread. */
    private static final ThreadLocal<ArrayDeque<Acquisition>> PROMOTING = new ThreadLocal<>();
    /** {@code Mode.values()} once: every release wakes through it, and {@code values()} copies the array. */
    private static final Mode[] MODES = Mode.values();

    /** Per key: the lone waiting {@link Acquisition}, or the {@link LocalQueue} of several. */
    private final ConcurrentHashMap<LockKey, Object> queues = new ConcurrentHashMap<>();

    private final int limit;
    private final ListenerEvents events;
    private final Subscriptions subscriptions;

    LocalQueues(int limit, ListenerEvents events, Store store) {
        this.limit = limit;
        this.events = events;
        this.subscriptions = new Subscriptions(store, this::wake);
    }

    /**
     * Adds an acquisition; starts it if it is the head; rejects it if the queue is full. A downgrade (the
     * read lock taken under the same thread's write hold) goes first and starts at once.
     */
    void enqueue(Acquisition acquisition) {
        if (queues.putIfAbsent(acquisition.key, acquisition) == null) {
            events.queued(acquisition.key.name()); // a lone caller: the head, whatever its kind
            acquisition.armDeadline(true);
            acquisition.becomeHead();
            return;
        }
        boolean[] outcome = new boolean[2]; // [0] rejected, [1] head
        queues.compute(acquisition.key, (k, value) -> {
            LocalQueue q = queueOf(k, value);
            if (q.size >= limit) {
                outcome[0] = true;
            } else if (acquisition.isDowngrade()) {
                // Every local reader queued here waits for this thread's write hold to end: behind them the
                // downgrade would wait for them and they for it. It goes first and asks at once; the head it
                // passes goes on asking beside it (see Acquisition#becomeHead).
                q.waiting.addFirst(acquisition);
                q.size++;
                outcome[1] = true;
            } else {
                q.waiting.addLast(acquisition);
                q.size++;
                outcome[1] = q.size == 1;
            }
            return q.size == 0 ? null : q;
        });
        if (outcome[0]) {
            events.rejected(acquisition.key.name());
            acquisition.reject(new LockRejectedException("lock '" + acquisition.key.name() + "': " + limit
                    + " callers of this client already wait for it (localQueueLimit)"));
        } else {
            events.queued(acquisition.key.name());
            acquisition.armDeadline(outcome[1]);
            if (outcome[1]) {
                acquisition.becomeHead();
            }
        }
    }

    /** Removes a finished acquisition; starts the next head if the finished one was the head. */
    void leave(Acquisition acquisition) {
        leave(acquisition, true);
    }

    /**
     * Removes a finished acquisition. With {@code promoteNext} false the next head stays queued: the
     * hold was passed to the finished one ({@link Cohort}), and the next wake-up starts it.
     */
    void leave(Acquisition acquisition, boolean promoteNext) {
        if (queues.remove(acquisition.key, acquisition)) {
            events.dequeued(acquisition.key.name()); // it was alone: nobody to promote, no subscription
            return;
        }
        Acquisition[] next = new Acquisition[1];
        boolean[] done = new boolean[2]; // [0] unsubscribe, [1] removed
        queues.computeIfPresent(acquisition.key, (k, value) -> {
            if (!(value instanceof LocalQueue q)) {
                return value; // another lone caller: this one had left already
            }
            boolean wasHead = q.waiting.peekFirst() == acquisition;
            if (q.waiting.remove(acquisition)) {
                q.size--;
                done[1] = true;
            }
            if (q.size == 0) {
                done[0] = q.subscribed;
                return null;
            }
            if (wasHead && promoteNext) {
                next[0] = q.waiting.peekFirst();
            }
            return q;
        });
        if (done[1]) {
            events.dequeued(acquisition.key.name());
        }
        if (done[0]) {
            subscriptions.release(acquisition.key);
        }
        if (next[0] != null) {
            promote(next[0]);
        }
    }

    /**
     * Starts a new head. A head that fails at once (client closed, store failing synchronously) leaves
     * and promotes the next one: that chain runs as a loop here, not as a recursion through every
     * caller of the queue, which would overflow the stack for long queues.
     */
    private static void promote(Acquisition head) {
        ArrayDeque<Acquisition> pending = PROMOTING.get();
        if (pending != null) {
            pending.add(head);
            return;
        }
        pending = new ArrayDeque<>();
        PROMOTING.set(pending);
        try {
            for (Acquisition next = head; next != null; next = pending.poll()) {
                next.becomeHead();
            }
        } finally {
            PROMOTING.remove();
        }
    }

    /**
     * Completes when wake-ups for the key's resource will be delivered. The first head of a queue to ask
     * takes the queue's subscription reference (dropped when the queue empties); a later head waits
     * until the subscription taken for it is live.
     */
    CompletableFuture<Subscription> subscribe(LockKey key) {
        boolean[] first = new boolean[1];
        queues.computeIfPresent(key, (k, value) -> {
            LocalQueue q = queueOf(k, value);
            first[0] = !q.subscribed;
            q.subscribed = true;
            return q;
        });
        return first[0] ? subscriptions.acquire(key) : subscriptions.live(key);
    }

    /** Inside compute: the key's queue, made from its lone caller (or empty) when it has none yet. */
    private static LocalQueue queueOf(LockKey key, Object value) {
        if (value instanceof LocalQueue q) {
            return q;
        }
        LocalQueue q = new LocalQueue(key);
        if (value != null) {
            q.waiting.add((Acquisition) value);
            q.size = 1;
        }
        return q;
    }

    /** The callers waiting for a key, first come first (a weakly consistent view), or null when none. */
    Iterable<Acquisition> inOrder(LockKey key) {
        Object value = queues.get(key);
        return value instanceof Acquisition a ? List.of(a) : value == null ? null : ((LocalQueue) value).waiting;
    }

    /** The first caller waiting for a key whose wait goes on, or null (a lock-free look). */
    Acquisition firstLive(LockKey key) {
        Object value = queues.get(key);
        if (value instanceof Acquisition a) {
            return a.isLive() ? a : null;
        }
        return value == null ? null : ((LocalQueue) value).firstLive();
    }

    /** Called by the store or by a local release: a resource may be free; wakes each mode's head. */
    void wake(LockKey anyModeKey, String nextOwner) {
        for (Mode mode : MODES) {
            if (mode.kind().equals(anyModeKey.kind())) {
                Object value = queues.get(mode == anyModeKey.mode() ? anyModeKey : anyModeKey.withMode(mode));
                if (value instanceof LocalQueue queue) {
                    queue.wakeHead(nextOwner);
                } else if (value instanceof Acquisition lone && (nextOwner == null || nextOwner.equals(lone.owner()))) {
                    lone.wake(true); // a lone caller has no hold-back: that is set on a queue
                }
            }
        }
    }

    /** See {@link LocalQueue#holdBack}. */
    void holdBack(LockKey key, long untilNanos) {
        LocalQueue[] held = new LocalQueue[1];
        queues.computeIfPresent(key, (k, value) -> held[0] = queueOf(k, value));
        if (held[0] != null) {
            held[0].holdBack(untilNanos);
        }
    }

    /** Whether no caller of this client waits (for tests: nothing is left behind). */
    boolean isEmpty() {
        return queues.isEmpty();
    }

    /** The keys callers wait for, in the order {@link #failAll} visits them (for tests of close). */
    java.util.Set<LockKey> waitingKeys() {
        return queues.keySet();
    }

    /** Fails every waiter and cancels every subscription (the client closes). */
    void failAll(LockException cause) {
        for (Object value : queues.values()) {
            if (value instanceof LocalQueue queue) {
                queue.failAll(cause);
            } else {
                ((Acquisition) value).fail(cause);
            }
        }
    }

    void closeSubscriptions() {
        subscriptions.closeAll();
    }
}
