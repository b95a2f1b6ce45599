package dev.dlock.jdbc;

import java.lang.reflect.InvocationTargetException;
import java.lang.reflect.Proxy;
import java.sql.Connection;
import java.sql.DriverManager;
import java.sql.SQLException;
import java.util.Set;
import java.util.concurrent.ConcurrentHashMap;
import java.util.concurrent.CountDownLatch;
import java.util.concurrent.atomic.AtomicReference;
import javax.sql.DataSource;

/**
 * A data source over the driver (no pool) whose connections can misbehave the way real ones do:
 *
 * <ul>
 *   <li>{@link #freezeCommits()}: the next {@code commit()} blocks until {@link #thaw()}, as a client that
 *       stops (pause, partition) between its {@code SELECT ... FOR UPDATE} and its commit: the server sees
 *       a session idle in a transaction that holds row locks;
 *   <li>{@link #reconnectAll()}: every open connection silently gets a new database session behind the
 *       same {@code Connection} object, as a driver that reconnects transparently does; the old session
 *       ends and the database drops what it held.
 * </ul>
 */
final class FaultyDataSource {
    private final String url;
    private final Set<Reconnecting> open = ConcurrentHashMap.newKeySet();
    private final AtomicReference<CountDownLatch> armed = new AtomicReference<>();
    private final CountDownLatch thawed = new CountDownLatch(1);
    private final java.util.concurrent.atomic.AtomicInteger frozenNow = new java.util.concurrent.atomic.AtomicInteger();
    private final DataSource dataSource;

    FaultyDataSource(String url) {
        this.url = url;
        this.dataSource = (DataSource) Proxy.newProxyInstance(
                getClass().getClassLoader(), new Class<?>[] {DataSource.class}, (p, m, args) -> switch (m.getName()) {
                    case "getConnection" -> connect();
                    case "isWrapperFor" -> false;
                    case "toString" -> "FaultyDataSource[" + url + "]";
                    case "hashCode" -> System.identityHashCode(p);
                    case "equals" -> p == args[0];
                    default -> throw new UnsupportedOperationException(m.getName());
                });
    }

    DataSource dataSource() {
        return dataSource;
    }

    /** The next commit of any connection blocks until {@link #thaw()} (once per data source). */
    void freezeCommits() {
        armed.set(thawed);
    }

    /** Lets the frozen commit go on (its session may be gone by then). */
    void thaw() {
        armed.set(null);
        thawed.countDown();
    }

    /** How many commits are blocked right now. */
    int frozenCommits() {
        return frozenNow.get();
    }

    /** Replaces the session behind every open connection; returns how many. */
    int reconnectAll() throws SQLException {
        int n = 0;
        for (Reconnecting r : open) {
            r.reconnect();
            n++;
        }
        return n;
    }

    private final class Reconnecting {
        volatile Connection physical;

        Reconnecting() throws SQLException {
            physical = DriverManager.getConnection(url);
        }

        synchronized void reconnect() throws SQLException {
            Connection old = physical;
            Connection fresh = DriverManager.getConnection(url);
            fresh.setAutoCommit(old.getAutoCommit());
            physical = fresh;
            old.close();
        }
    }

    private Connection connect() throws SQLException {
        Reconnecting r = new Reconnecting();
        open.add(r);
        return (Connection)
                Proxy.newProxyInstance(getClass().getClassLoader(), new Class<?>[] {Connection.class}, (p, m, args) -> {
                    if (m.getName().equals("commit")) {
                        CountDownLatch latch = armed.getAndSet(null);
                        if (latch != null) {
                            frozenNow.incrementAndGet();
                            try {
                                latch.await();
                            } finally {
                                frozenNow.decrementAndGet();
                            }
                        }
                    }
                    if (m.getName().equals("close")) {
                        open.remove(r);
                    }
                    try {
                        return m.invoke(r.physical, args);
                    } catch (InvocationTargetException e) {
                        throw e.getCause();
                    }
                });
    }
}
