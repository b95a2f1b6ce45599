package dev.dlock.internal;

import dev.dlock.LockException;
import dev.dlock.LockRejectedException;
import dev.dlock.spi.LockKey;
import java.util.ArrayDeque;
import java.util.concurrent.ConcurrentLinkedDeque;

/**
 * The callers of one client waiting for one resource in one mode (the local tier of the two-tier queue).
 *
 * <p>Concurrency: only the head talks to the store; the others wait in memory until they become head or
 * their own deadline passes. All changes to a queue happen inside {@code ConcurrentHashMap.compute} on
 * the engine's queue map, which serialises them per key; nothing blocking runs there. Readers outside
 * it (wake-ups, close) only peek at the lock-free deque. A queue that
 * empties is removed from the map in the same step, and its wake-up subscription reference is returned.
 */
final class LocalQueue {
    private final LockKey key;
    private final ConcurrentLinkedDeque<Acquisition> waiting = new ConcurrentLinkedDeque<>();
    private int size; // changed and read only inside compute
    private boolean subscribed;
    /** Until then a head left queued by a chain of passes ignores wake-ups ({@link #holdBack}); 0: never. */
    private volatile long holdBackUntilNanos;

    private LocalQueue(LockKey key) {
        this.key = key;
    }

    /** Adds an acquisition; starts it if it is the head; rejects it if the queue is full. */
    static void enqueue(Engine engine, Acquisition acquisition) {
        int limit = engine.options.localQueueLimit();
        boolean[] outcome = new boolean[2]; // [0] rejected, [1] head
        engine.queues.compute(acquisition.key, (k, queue) -> {
            LocalQueue q = queue != null ? queue : new LocalQueue(k);
            if (q.size >= limit) {
                outcome[0] = true;
            } else {
                q.waiting.addLast(acquisition);
                q.size++;
                outcome[1] = q.size == 1;
            }
            return q.size == 0 ? null : q;
        });
        if (outcome[0]) {
            engine.events.fire(l -> l.rejected(acquisition.key.name()));
            acquisition.reject(new LockRejectedException("lock '" + acquisition.key.name() + "': " + limit
                    + " callers of this client already wait for it (localQueueLimit)"));
        } else {
            engine.events.fire(l -> l.queued(acquisition.key.name()));
            acquisition.armDeadline(outcome[1]);
            if (outcome[1]) {
                acquisition.becomeHead();
            }
        }
    }

    /** Removes a finished acquisition; starts the next head if the finished one was the head. */
    static void leave(Engine engine, Acquisition acquisition) {
        leave(engine, acquisition, true);
    }

    /**
     * Removes a finished acquisition. With {@code promoteNext} false the next head stays queued: the
     * hold was passed to the finished one ({@link Cohort}), and the next wake-up starts it.
     */
    static void leave(Engine engine, Acquisition acquisition, boolean promoteNext) {
        Acquisition[] next = new Acquisition[1];
        boolean[] done = new boolean[2]; // [0] unsubscribe, [1] removed
        engine.queues.computeIfPresent(acquisition.key, (k, q) -> {
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
            engine.events.fire(l -> l.dequeued(acquisition.key.name()));
        }
        if (done[0]) {
            engine.subscriptions.release(acquisition.key);
        }
        if (next[0] != null) {
            promote(next[0]);
        }
    }

    /** Heads waiting to be started by the outermost {@link #promote} call on this thread. */
    private static final ThreadLocal<ArrayDeque<Acquisition>> PROMOTING = new ThreadLocal<>();

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
     * Marks the queue as holding a subscription reference.
     *
     * @return true if the caller must take the reference (the first time), false if already taken
     */
    static boolean markSubscribed(Engine engine, LockKey key) {
        boolean[] first = new boolean[1];
        engine.queues.computeIfPresent(key, (k, q) -> {
            first[0] = !q.subscribed;
            q.subscribed = true;
            return q;
        });
        return first[0];
    }

    /** The first waiter whose wait goes on, or null (a lock-free look). */
    Acquisition firstLive() {
        for (Acquisition a : waiting) {
            if (a.isLive()) {
                return a;
            }
        }
        return null;
    }

    /** The waiters, first come first (a weakly consistent view). */
    Iterable<Acquisition> inOrder() {
        return waiting;
    }

    void wakeHead(String nextOwner) {
        Acquisition head = waiting.peekFirst();
        if (head != null && (nextOwner == null || nextOwner.equals(head.owner))) {
            long until = holdBackUntilNanos;
            head.wake(until == 0 || System.nanoTime() - until >= 0);
        }
    }

    /**
     * After a chain of passes gave the hold back to the store ({@link Cohort}), the head it left queued
     * ignores wake-ups until {@code untilNanos}, so that waiters of other clients, woken by the same
     * release, get the hold first; a wake-up at {@code untilNanos} starts it.
     */
    static void holdBack(Engine engine, LockKey key, long untilNanos) {
        LocalQueue q = engine.queues.get(key);
        if (q != null) {
            q.holdBackUntilNanos = untilNanos;
        }
    }

    void failAll(LockException cause) {
        for (Acquisition a : waiting) {
            a.fail(cause);
        }
    }

    @Override
    public String toString() {
        return "LocalQueue[" + key.name() + "/" + key.mode() + "]";
    }
}
