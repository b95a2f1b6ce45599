package dev.dlock.jdbc;

import java.lang.reflect.InvocationHandler;
import java.lang.reflect.InvocationTargetException;
import java.lang.reflect.Method;
import java.lang.reflect.Proxy;
import java.sql.Connection;
import java.sql.Statement;
import java.util.ArrayList;
import java.util.List;
import javax.sql.DataSource;

/**
 * A data source that records every statement execution, commit and rollback its connections send (each
 * one network round trip), so that tests can count round trips per operation. Everything else passes
 * straight through to the real data source.
 */
final class CountingDataSource {
    private final List<String> sent = new ArrayList<>();
    private final DataSource proxy;
    /** setAutoCommit calls: a round trip with MariaDB Connector/J, none with pgjdbc (BEGIN is piggybacked). */
    final java.util.concurrent.atomic.AtomicInteger autoCommitSwitches =
            new java.util.concurrent.atomic.AtomicInteger();

    CountingDataSource(DataSource real) {
        this.proxy = (DataSource)
                Proxy.newProxyInstance(getClass().getClassLoader(), new Class<?>[] {DataSource.class}, (p, m, args) -> {
                    Object result = invoke(real, m, args);
                    return m.getName().equals("getConnection") ? wrapConnection((Connection) result) : result;
                });
    }

    DataSource dataSource() {
        return proxy;
    }

    synchronized List<String> sent() {
        return List.copyOf(sent);
    }

    synchronized void clear() {
        sent.clear();
        autoCommitSwitches.set(0);
    }

    private synchronized void record(String what) {
        sent.add(what);
    }

    private Connection wrapConnection(Connection real) {
        return (Connection)
                Proxy.newProxyInstance(getClass().getClassLoader(), new Class<?>[] {Connection.class}, (p, m, args) -> {
                    String name = m.getName();
                    if (name.equals("commit") || name.equals("rollback")) {
                        record(name.toUpperCase());
                    }
                    if (name.equals("setAutoCommit")) {
                        autoCommitSwitches.incrementAndGet();
                    }
                    Object result = invoke(real, m, args);
                    if (result instanceof Statement st && !name.equals("unwrap")) {
                        String sql = args != null && args.length > 0 && args[0] instanceof String s ? s : null;
                        return wrapStatement(st, sql, m.getReturnType());
                    }
                    return result;
                });
    }

    private Object wrapStatement(Statement real, String preparedSql, Class<?> type) {
        InvocationHandler h = (p, m, args) -> {
            if (m.getName().startsWith("execute")) {
                String sql = args != null && args.length > 0 && args[0] instanceof String s ? s : preparedSql;
                record(sql);
            }
            return invoke(real, m, args);
        };
        return Proxy.newProxyInstance(getClass().getClassLoader(), new Class<?>[] {type}, h);
    }

    private static Object invoke(Object target, Method m, Object[] args) throws Throwable {
        try {
            return m.invoke(target, args);
        } catch (InvocationTargetException e) {
            throw e.getCause();
        }
    }
}
