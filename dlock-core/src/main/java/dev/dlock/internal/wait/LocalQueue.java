package dev.dlock.internal.wait;

import dev.dlock.LockException;
import dev.dlock.spi.LockKey;
import java.util.concurrent.ConcurrentLinkedDeque;

/**
 * The callers of one client waiting for one resource in one mode, first come first.
 *
 * <p>Concurrency: only the head talks to the store; the others wait in memory until they become head or
 * their own deadline passes. Every change happens inside {@code compute} on the map of {@link
 * LocalQueues}, which serialises them per key; readers outside it (wake-ups, hand-off, close) only peek
 * at the lock-free deque.
 */
final class LocalQueue {
    private final LockKey key;
    final ConcurrentLinkedDeque<Acquisition> waiting = new ConcurrentLinkedDeque<>();
    /** Changed and read only inside compute. */
    int size;
    /** Whether the queue holds a subscription reference; changed only inside compute. */
    boolean subscribed;
    /** Until then a head left queued by a chain of passes ignores wake-ups ({@link #holdBack}); 0: never. */
    private volatile long holdBackUntilNanos;

    LocalQueue(LockKey key) {
        this.key = key;
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

    void wakeHead(String nextOwner) {
        Acquisition head = waiting.peekFirst();
        if (head != null && (nextOwner == null || nextOwner.equals(head.owner()))) {
            long until = holdBackUntilNanos;
            head.wake(until == 0 || head.nanoTime() - until >= 0);
        }
    }

    /**
     * After a chain of passes gave the hold back to the store ({@link Cohort}), the head it left queued
     * ignores wake-ups until {@code untilNanos}, so that waiters of other clients, woken by the same
     * release, get the hold first; a wake-up at {@code untilNanos} starts it.
     */
    void holdBack(long untilNanos) {
        holdBackUntilNanos = untilNanos;
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
