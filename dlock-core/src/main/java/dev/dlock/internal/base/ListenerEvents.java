package dev.dlock.internal.base;

import dev.dlock.LockListener;
import java.time.Duration;
import java.util.concurrent.ArrayBlockingQueue;
import java.util.concurrent.ThreadPoolExecutor;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.atomic.AtomicInteger;
import java.util.concurrent.atomic.AtomicLong;
import java.util.function.Consumer;

/**
 * Delivers {@link LockListener} events off the engine's own threads.
 *
 * <p>Why: events happen on the renewal scheduler and on the store client's I/O threads. A listener that
 * blocks there (a slow metrics exporter, a logger writing to a full disk) would delay renewal answers and
 * cost leases. So events are handed to one listener thread per client, in the order they happened.
 *
 * <p>Bounds: the thread exists only while events are pending (it ends after one idle second), and at most
 * {@link #CAPACITY} events wait; past that, new events are dropped and counted ({@link #dropped()}), so a
 * listener that never returns costs memory bounded by the capacity and never a lease. A client with the
 * default no-op listener pays nothing: no thread, no queue, and no allocation per event (each event has its
 * own method, which returns before building anything).
 *
 * <p>Exceptions thrown by the listener are swallowed: a listener must not break locking.
 */
public final class ListenerEvents {
    /** The default listener, which ignores every event; a client with it starts no listener thread. */
    public static final LockListener NONE = new LockListener() {};

    static final int CAPACITY = 10_000;
    private static final AtomicInteger THREADS = new AtomicInteger();

    private final LockListener listener;
    private final ThreadPoolExecutor executor;
    private final AtomicLong dropped = new AtomicLong();

    /**
     * Events for one client's listener.
     *
     * @param listener the listener; {@link #NONE} costs nothing
     */
    public ListenerEvents(LockListener listener) {
        this.listener = listener;
        if (listener == NONE) {
            executor = null;
            return;
        }
        executor = new ThreadPoolExecutor(1, 1, 1, TimeUnit.SECONDS, new ArrayBlockingQueue<>(CAPACITY), r -> {
            Thread t = new Thread(r, "dlock-listener-" + THREADS.incrementAndGet());
            t.setDaemon(true);
            return t;
        });
        executor.allowCoreThreadTimeOut(true);
        executor.setRejectedExecutionHandler((task, pool) -> dropped.incrementAndGet());
    }

    /**
     * {@link LockListener#acquired}.
     *
     * @param name the lock name
     * @param waitedNanos how long the caller waited
     */
    public void acquired(String name, long waitedNanos) {
        if (executor != null) {
            fire(l -> l.acquired(name, Duration.ofNanos(waitedNanos)));
        }
    }

    /**
     * {@link LockListener#failed}.
     *
     * @param name the lock name
     * @param waitedNanos how long the caller waited
     * @param cause why
     */
    public void failed(String name, long waitedNanos, Throwable cause) {
        if (executor != null) {
            fire(l -> l.failed(name, Duration.ofNanos(waitedNanos), cause));
        }
    }

    /**
     * {@link LockListener#queued}.
     *
     * @param name the lock name
     */
    public void queued(String name) {
        if (executor != null) {
            fire(l -> l.queued(name));
        }
    }

    /**
     * {@link LockListener#dequeued}.
     *
     * @param name the lock name
     */
    public void dequeued(String name) {
        if (executor != null) {
            fire(l -> l.dequeued(name));
        }
    }

    /**
     * {@link LockListener#rejected}.
     *
     * @param name the lock name
     */
    public void rejected(String name) {
        if (executor != null) {
            fire(l -> l.rejected(name));
        }
    }

    /**
     * {@link LockListener#released}.
     *
     * @param name the lock name
     * @param heldNanos how long it was held
     */
    public void released(String name, long heldNanos) {
        if (executor != null) {
            fire(l -> l.released(name, Duration.ofNanos(heldNanos)));
        }
    }

    /**
     * {@link LockListener#renewed}.
     *
     * @param leases leases in the batch
     * @param lost leases the store no longer held
     */
    public void renewed(int leases, int lost) {
        if (executor != null) {
            fire(l -> l.renewed(leases, lost));
        }
    }

    /**
     * {@link LockListener#lost}.
     *
     * @param name the lock name
     * @param reason why it was lost
     */
    public void lost(String name, String reason) {
        if (executor != null) {
            fire(l -> l.lost(name, reason));
        }
    }

    /**
     * {@link LockListener#heldBack}.
     *
     * @param name the lock name
     * @param leftMillis how long the hold-back lasts
     */
    public void heldBack(String name, long leftMillis) {
        if (executor != null) {
            fire(l -> l.heldBack(name, Duration.ofMillis(leftMillis)));
        }
    }

    /** Queues one event for the listener; never blocks the calling thread. */
    private void fire(Consumer<LockListener> event) {
        executor.execute(() -> {
            try {
                event.accept(listener);
            } catch (RuntimeException ignored) {
                // A listener must not break locking.
            }
        });
    }

    /** Events dropped because the listener fell {@link #CAPACITY} events behind. */
    long dropped() {
        return dropped.get();
    }

    /**
     * Delivers what is queued for up to {@code nanos}, then stops the listener thread.
     *
     * @param nanos the longest wait for queued events
     */
    public void close(long nanos) {
        if (executor == null) {
            return;
        }
        executor.shutdown();
        try {
            if (!executor.awaitTermination(nanos, TimeUnit.NANOSECONDS)) {
                executor.shutdownNow();
            }
        } catch (InterruptedException e) {
            executor.shutdownNow();
            Thread.currentThread().interrupt();
        }
    }
}
