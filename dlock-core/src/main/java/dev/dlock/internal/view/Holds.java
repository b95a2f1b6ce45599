package dev.dlock.internal.view;

import dev.dlock.internal.lease.HeldLease;
import java.util.concurrent.ConcurrentHashMap;

/**
 * Thread-owned holds of the {@code Lock} view, with reentrancy counts.
 *
 * <p>Concurrency: an entry is only ever created, changed and removed by the thread it belongs to (or,
 * once that thread has ended, removed by the watchdog), so the count needs no synchronisation; the map is concurrent because many threads use it at once.
 */
public final class Holds {
    private final ConcurrentHashMap<Key, Hold> holds = new ConcurrentHashMap<>();

    /** A thread's hold on a resource (a {@code LockKey}, or a list of them for a multi-lock). */
    record Key(Thread thread, Object resource) {}

    static final class Hold {
        final HeldLease lease;
        int count = 1;

        Hold(HeldLease lease) {
            this.lease = lease;
        }
    }

    Hold current(Object resource) {
        return holds.get(new Key(Thread.currentThread(), resource));
    }

    void put(Object resource, Hold hold) {
        holds.put(new Key(Thread.currentThread(), resource), hold);
    }

    void remove(Object resource) {
        holds.remove(new Key(Thread.currentThread(), resource));
    }

    /** No holds yet. */
    public Holds() {}

    /**
     * Drops every hold of a thread that has ended (called by the watchdog, not by the thread itself).
     *
     * @param ended the thread
     */
    public void forget(Thread ended) {
        holds.keySet().removeIf(k -> k.thread() == ended);
    }
}
