package dev.dlock.internal.wait;

import dev.dlock.internal.store.Store;
import dev.dlock.spi.LockBackend.Subscription;
import dev.dlock.spi.LockKey;
import dev.dlock.spi.Mode;
import java.util.HashMap;
import java.util.Map;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.ScheduledFuture;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.locks.ReentrantLock;
import java.util.function.BiConsumer;

/**
 * At most one store wake-up subscription per client and resource, shared by every local queue of that
 * resource (for a read-write lock: the read and the write queue).
 *
 * <p>Wake-ups go to the local queues ({@code LocalQueues#wake}), which wake the head of each queue of the
 * resource.
 *
 * <p>Concurrency: reference counts change under one lock that is never held across a store call. A
 * subscription whose last user leaves lingers for a second before it is cancelled, so a lock that is
 * taken again and again under contention does not pay a subscribe round trip every time.
 */
final class Subscriptions {
    private static final long LINGER_NANOS = TimeUnit.SECONDS.toNanos(1);

    private final Store store;
    /** Told of a wake-up: the resource, and the owner the store names as next (or null). */
    private final BiConsumer<LockKey, String> wake;

    private final ReentrantLock lock = new ReentrantLock();
    private final Map<LockKey, Entry> entries = new HashMap<>();

    Subscriptions(Store store, BiConsumer<LockKey, String> wake) {
        this.store = store;
        this.wake = wake;
    }

    private static final class Entry {
        final CompletableFuture<Subscription> live;
        int users;
        ScheduledFuture<?> closing;

        Entry(CompletableFuture<Subscription> live) {
            this.live = live;
        }
    }

    private static LockKey resource(LockKey key) {
        return key.mode() == Mode.WRITE ? key.withMode(Mode.READ) : key;
    }

    /** Takes a reference; completes when wake-ups for the resource will be delivered. */
    CompletableFuture<Subscription> acquire(LockKey key) {
        return join(key, true);
    }

    /**
     * For a caller whose queue already holds a reference: completes when wake-ups will be delivered, so
     * that a caller that takes over a subscription still on its way does not miss a wake-up. A failed
     * subscription is started again.
     */
    CompletableFuture<Subscription> live(LockKey key) {
        return join(key, false);
    }

    private CompletableFuture<Subscription> join(LockKey key, boolean newUser) {
        LockKey resource = resource(key);
        CompletableFuture<Subscription> started = null;
        Entry entry;
        lock.lock();
        try {
            Entry old = entries.get(resource);
            if (old == null && !newUser) {
                return CompletableFuture.completedFuture(null); // closed meanwhile
            }
            entry = old;
            if (old == null || old.live.isCompletedExceptionally()) {
                started = new CompletableFuture<>();
                entry = new Entry(started);
                // Queues that took a reference on a failed subscription still release it later.
                entry.users = old == null ? 0 : old.users;
                entries.put(resource, entry);
            }
            if (newUser) {
                entry.users++;
                if (entry.closing != null) {
                    entry.closing.cancel(false);
                    entry.closing = null;
                }
            }
        } finally {
            lock.unlock();
        }
        if (started != null) {
            CompletableFuture<Subscription> target = started;
            store.subscribe(resource, next -> wake.accept(resource, next)).whenComplete((sub, error) -> {
                if (error != null) {
                    target.completeExceptionally(error);
                } else {
                    target.complete(sub);
                }
            });
        }
        return entry.live;
    }

    /** Drops a reference; the subscription is cancelled after a short linger if nobody takes it again. */
    void release(LockKey key) {
        LockKey resource = resource(key);
        lock.lock();
        try {
            Entry entry = entries.get(resource);
            if (entry == null || --entry.users > 0) {
                return;
            }
            entry.closing = store.schedule(() -> closeIfUnused(resource, entry), LINGER_NANOS);
        } finally {
            lock.unlock();
        }
    }

    private void closeIfUnused(LockKey resource, Entry entry) {
        lock.lock();
        try {
            if (entry.users > 0 || entries.get(resource) != entry) {
                return;
            }
            entries.remove(resource);
        } finally {
            lock.unlock();
        }
        entry.live.thenAccept(Subscription::cancel);
    }

    void closeAll() {
        Map<LockKey, Entry> all;
        lock.lock();
        try {
            all = new HashMap<>(entries);
            entries.clear();
        } finally {
            lock.unlock();
        }
        for (Entry entry : all.values()) {
            entry.live.thenAccept(Subscription::cancel);
        }
    }
}
