package dev.dlock.jdbc;

import dev.dlock.spi.LockBackend.Subscription;
import dev.dlock.spi.WakeListener;
import java.sql.Connection;
import java.sql.SQLException;
import java.sql.Statement;
import java.util.List;
import java.util.Map;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.ConcurrentHashMap;
import java.util.concurrent.ConcurrentLinkedQueue;
import java.util.concurrent.CopyOnWriteArrayList;
import java.util.concurrent.TimeUnit;
import org.postgresql.PGConnection;
import org.postgresql.PGNotification;

/**
 * PostgreSQL wake-ups: one dedicated connection per backend that {@code LISTEN}s on one channel per
 * resource somebody waits for, and one thread that receives the notifications.
 *
 * <p>Releases, queue exits and forced releases call {@code pg_notify(channel, nextOwner)} in the same
 * statement that changes the table, so a notification is sent exactly when the change commits. The
 * channel is a hash of table prefix, namespace, kind and name ({@link LeaseTable#channel}).
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
 */
final class PgNotifier implements AutoCloseable {
    static final long WAIT_MILLIS = 25;
    private static final long MAX_RECONNECT_MILLIS = 1000;

    interface ConnectionSource {
        Connection open() throws SQLException;
    }

    private record Command(String channel, boolean listen, CompletableFuture<Void> done) {}

    private final ConnectionSource source;
    private final Map<String, List<WakeListener>> listeners = new ConcurrentHashMap<>();
    private final ConcurrentLinkedQueue<Command> commands = new ConcurrentLinkedQueue<>();
    private final Thread thread;
    private volatile boolean closed;
    private Connection connection; // only the listener thread touches it

    PgNotifier(ConnectionSource source, String threadName) {
        this.source = source;
        this.thread = new Thread(this::run, threadName);
        thread.setDaemon(true);
        thread.start();
    }

    /** Registers a listener; completes once the channel is listened to on the live connection. */
    CompletableFuture<Subscription> subscribe(String channel, WakeListener listener) {
        CompletableFuture<Void> done = new CompletableFuture<>();
        boolean[] first = new boolean[1];
        listeners.compute(channel, (k, list) -> {
            List<WakeListener> l = list != null ? list : new CopyOnWriteArrayList<>();
            first[0] = l.isEmpty();
            l.add(listener);
            return l;
        });
        // Every subscriber waits for a LISTEN round on the live connection, so none is told "live" early.
        commands.add(new Command(channel, true, done));
        if (closed) {
            done.completeExceptionally(new IllegalStateException("the backend is closed"));
        }
        return done.thenApply(v -> () -> unsubscribe(channel, listener));
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
                if (connection == null) {
                    connection = source.open();
                    try (Statement st = connection.createStatement()) {
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
                        try (Statement st = connection.createStatement()) {
                            st.execute(listen(command.channel(), command.listen()));
                        }
                    }
                    command.done().complete(null);
                }
                PGNotification[] received =
                        connection.unwrap(PGConnection.class).getNotifications((int) WAIT_MILLIS);
                if (received != null) {
                    for (PGNotification n : received) {
                        deliver(n.getName(), n.getParameter());
                    }
                }
            } catch (SQLException | RuntimeException e) {
                closeConnection();
                if (closed) {
                    break;
                }
                sleep(backoff);
                backoff = Math.min(MAX_RECONNECT_MILLIS, backoff * 2);
            }
        }
        closeConnection();
        Command command;
        while ((command = commands.poll()) != null) {
            command.done().completeExceptionally(new IllegalStateException("the backend is closed"));
        }
    }

    private static String listen(String channel, boolean listen) {
        // Channel names are generated hex identifiers (LeaseTable.channel), never user text.
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

    private void closeConnection() {
        if (connection != null) {
            try {
                connection.close();
            } catch (SQLException ignored) {
                // Already broken.
            }
            connection = null;
        }
    }

    private void sleep(long millis) {
        try {
            Thread.sleep(millis);
        } catch (InterruptedException e) {
            Thread.currentThread().interrupt();
            closed = true;
        }
    }

    /** Stops the thread and closes the connection, waiting up to {@code waitMillis}. */
    void close(long waitMillis) {
        closed = true;
        thread.interrupt();
        try {
            thread.join(TimeUnit.MILLISECONDS.toMillis(waitMillis));
        } catch (InterruptedException e) {
            Thread.currentThread().interrupt();
        }
    }

    @Override
    public void close() {
        close(5000);
    }
}
