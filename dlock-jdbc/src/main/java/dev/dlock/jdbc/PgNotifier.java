package dev.dlock.jdbc;

import dev.dlock.LockBackendException;
import dev.dlock.spi.LockBackend.Subscription;
import dev.dlock.spi.WakeListener;
import java.sql.SQLException;
import java.sql.Statement;
import java.util.List;
import java.util.Map;
import java.util.Set;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.ConcurrentHashMap;
import java.util.concurrent.ConcurrentLinkedQueue;
import java.util.concurrent.CopyOnWriteArrayList;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.atomic.AtomicBoolean;
import java.util.concurrent.locks.LockSupport;
import org.postgresql.PGConnection;
import org.postgresql.PGNotification;

/**
 * PostgreSQL wake-ups: one dedicated connection per backend that {@code LISTEN}s on one channel per
 * resource somebody waits for, and one thread that receives the notifications.
 *
 * <p>Releases, queue exits and forced releases call {@code pg_notify(channel, nextOwner)} in the same
 * statement that changes the table, so a notification is sent exactly when the change commits. The
 * channel is a hash of table prefix, namespace, kind and name ({@link Tables#channel}).
 *
 * <p>Concurrency: only the thread {@code dlock-pg-listen-N} uses the connection. {@code LISTEN} and {@code
 * UNLISTEN} requests are queued to it; it runs them between waits for notifications of at most {@link
 * #WAIT_MILLIS} (the driver's wait holds the connection, so a new subscription is live within that time).
 * Waiting there is a socket read, not a query: nothing is sent to the database while idle.
 *
 * <p>Failure modes: when the connection fails (server restart, {@code pg_terminate_backend}, network),
 * the thread reconnects with bounded backoff, listens again on every channel, and then wakes every
 * listener, because notifications sent meanwhile are lost. Until then waiters still retry when the
 * holder's lease runs out (the busy answer's hint), so a lost notification delays, never blocks.
 *
 * <p>A subscription that is not live within the operation timeout fails and is withdrawn at once; if its
 * {@code LISTEN} still runs later, it is undone ({@code UNLISTEN} when nobody else listens on the channel),
 * so a call the engine gave up on leaves nothing behind. The connection is a {@link DedicatedSession}:
 * in auto-commit mode whatever the pool's setting (a {@code LISTEN} inside an open transaction never takes
 * effect), given back after {@code UNLISTEN *} on close, and discarded, never given back, when it failed.
 */
final class PgNotifier implements AutoCloseable {
    static final long WAIT_MILLIS = 25;
    private static final long MAX_RECONNECT_MILLIS = 1000;

    private record Command(String channel, boolean listen, CompletableFuture<Void> done) {}

    private final DedicatedSession.Source source;
    private final long timeoutMillis;
    private final Map<String, List<WakeListener>> listeners = new ConcurrentHashMap<>();
    private final ConcurrentLinkedQueue<Command> commands = new ConcurrentLinkedQueue<>();
    private final Thread thread;
    private volatile boolean closed;
    private volatile DedicatedSession session; // used by the listener thread; discarded by close if stuck

    PgNotifier(DedicatedSession.Source source, String threadName, long timeoutMillis) {
        this.source = source;
        this.timeoutMillis = timeoutMillis;
        this.thread = new Thread(this::run, threadName);
        thread.setDaemon(true);
        thread.start();
    }

    /**
     * Registers a listener; completes once the channel is listened to on the live connection, or fails
     * after the operation timeout, withdrawing the listener.
     */
    CompletableFuture<Subscription> subscribe(String channel, WakeListener listener) {
        CompletableFuture<Void> done = new CompletableFuture<>();
        listeners.compute(channel, (k, list) -> {
            List<WakeListener> l = list != null ? list : new CopyOnWriteArrayList<>();
            l.add(listener);
            return l;
        });
        AtomicBoolean cancelled = new AtomicBoolean();
        Subscription subscription = () -> {
            if (cancelled.compareAndSet(false, true)) {
                unsubscribe(channel, listener);
            }
        };
        CompletableFuture<Subscription> result = new CompletableFuture<>();
        result.whenComplete((s, e) -> {
            if (e != null) {
                subscription.cancel();
            }
        });
        done.whenComplete((v, e) -> {
            if (e != null) {
                result.completeExceptionally(e);
            } else if (!result.complete(subscription)) {
                subscription.cancel(); // live after its call gave up: undo it
            }
        });
        CompletableFuture.delayedExecutor(timeoutMillis, TimeUnit.MILLISECONDS)
                .execute(() -> result.completeExceptionally(new LockBackendException(
                        "LISTEN was not live within the operation timeout (" + timeoutMillis + " ms)")));
        // Every subscriber waits for a LISTEN round on the live connection, so none is told "live" early.
        commands.add(new Command(channel, true, done));
        if (closed) {
            done.completeExceptionally(new IllegalStateException("the backend is closed"));
        }
        return result;
    }

    /** The channels with listeners (for tests). */
    Set<String> channels() {
        return Set.copyOf(listeners.keySet());
    }

    private void unsubscribe(String channel, WakeListener listener) {
        boolean[] last = new boolean[1];
        listeners.computeIfPresent(channel, (k, list) -> {
            list.remove(listener);
            last[0] = list.isEmpty();
            return list.isEmpty() ? null : list;
        });
        if (last[0]) {
            commands.add(new Command(channel, false, new CompletableFuture<>()));
        }
    }

    private void run() {
        long backoff = 50;
        while (!closed) {
            try {
                if (session == null) {
                    session = DedicatedSession.open(source, Dialect.POSTGRESQL);
                    try (Statement st = session.connection().createStatement()) {
                        for (String channel : listeners.keySet()) {
                            st.execute(listen(channel, true));
                        }
                    }
                    backoff = 50;
                    wakeAll(); // notifications sent while we were not listening are lost
                }
                Command command;
                while ((command = commands.poll()) != null) {
                    boolean wanted = listeners.containsKey(command.channel());
                    if (command.listen() == wanted) {
                        try (Statement st = session.connection().createStatement()) {
                            st.execute(listen(command.channel(), command.listen()));
                        }
                    }
                    command.done().complete(null);
                }
                PGNotification[] received =
                        session.connection().unwrap(PGConnection.class).getNotifications((int) WAIT_MILLIS);
                if (received != null) {
                    for (PGNotification n : received) {
                        deliver(n.getName(), n.getParameter());
                    }
                }
            } catch (SQLException | RuntimeException e) {
                discardSession();
                if (closed) {
                    break;
                }
                sleep(backoff);
                backoff = Math.min(MAX_RECONNECT_MILLIS, backoff * 2);
            }
        }
        DedicatedSession last = session;
        session = null;
        if (last != null) {
            last.release("UNLISTEN *");
        }
        Command command;
        while ((command = commands.poll()) != null) {
            command.done().completeExceptionally(new IllegalStateException("the backend is closed"));
        }
    }

    private static String listen(String channel, boolean listen) {
        // Channel names are generated hex identifiers (Tables.channel), never user text.
        return (listen ? "LISTEN \"" : "UNLISTEN \"") + channel + "\"";
    }

    private void deliver(String channel, String payload) {
        List<WakeListener> list = listeners.get(channel);
        if (list != null) {
            String next = payload == null || payload.isEmpty() ? null : payload;
            for (WakeListener l : list) {
                l.wake(next);
            }
        }
    }

    private void wakeAll() {
        for (List<WakeListener> list : listeners.values()) {
            for (WakeListener l : list) {
                l.wake(null);
            }
        }
    }

    /** A failed connection may still be listening: it never goes back to a pool. */
    private void discardSession() {
        DedicatedSession failed = session;
        session = null;
        if (failed != null) {
            failed.discard();
        }
    }

    /** Backoff before reconnecting; {@link #close} cuts it short (unpark, not interrupt). */
    private void sleep(long millis) {
        long until = System.nanoTime() + TimeUnit.MILLISECONDS.toNanos(millis);
        long left;
        while (!closed && (left = until - System.nanoTime()) > 0) {
            LockSupport.parkNanos(this, left);
        }
    }

    /**
     * Stops the thread, which gives the connection back after {@code UNLISTEN *}, waiting up to {@code
     * waitMillis}; a thread still stuck then has its connection discarded.
     */
    void close(long waitMillis) {
        closed = true;
        // Not an interrupt: one that lands in the driver's socket read breaks the connection, which then
        // has to be discarded instead of given back. Every wait of the thread is short (25 ms).
        LockSupport.unpark(thread);
        try {
            thread.join(waitMillis);
        } catch (InterruptedException e) {
            Thread.currentThread().interrupt();
        }
        if (thread.isAlive()) {
            discardSession();
        }
    }

    @Override
    public void close() {
        close(5000);
    }
}
