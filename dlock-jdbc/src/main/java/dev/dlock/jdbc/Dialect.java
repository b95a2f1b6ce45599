package dev.dlock.jdbc;

import java.io.IOException;
import java.io.InputStream;
import java.nio.charset.StandardCharsets;
import java.util.ArrayList;
import java.util.List;
import java.util.Locale;
import java.util.function.Function;

/**
 * The supported databases and what differs between them: the expression for the database's clock, the
 * session-id expression, the shipped DDL, and which statements run in a form of their own ({@link #sql}).
 *
 * <p>Design: the differences are data and classes chosen here, never branches in the table code,
 * {@link Transactions} or {@link AdvisoryLocks}. PostgreSQL's single-statement fast paths, {@code
 * pg_notify} wake-ups, {@code SET LOCAL} transaction limits and advisory locks live in {@link PostgresSql};
 * MySQL's/MariaDB's single-statement exclusive acquire and token, session-level transaction limits and
 * {@code GET_LOCK} advisory locks in {@link MysqlSql}; H2 runs the portable SQL ({@link PortableSql}),
 * every grant a short transaction, and has no advisory locks.
 *
 * <p>Every time the backend stores or compares is milliseconds since the epoch by the database's clock,
 * computed in SQL ({@link #nowMillis}); the JVM's clock is never sent. The one exception in units is the
 * floor of fencing tokens, the same clock in microseconds ({@link #nowMicros}). The expressions avoid
 * session time zones: PostgreSQL and H2 take the epoch of a zoned timestamp, MySQL counts from the epoch
 * in UTC.
 *
 * <p>Invariants: a dialect is fixed when the backend opens (from the URL's sub-protocol, or from the
 * product name the driver reports for a {@code DataSource}) and never changes; MySQL and MariaDB are one
 * dialect, since the statements dlock needs are the same on both. Each dialect's DDL ships as a resource
 * with a {@code ${prefix}} placeholder, is idempotent ({@code IF NOT EXISTS}) and is split by {@link
 * #ddl} at lines ending in {@code ;}, skipping whole-line {@code --} comments: the shipped files keep to
 * that form.
 *
 * <p>Why an enum of data plus a statement class per database: the set of databases is closed and known
 * at compile time, so the table code can take a dialect without a default case, and adding a database is
 * one constant, one statement class (extending {@link PortableSql} where the portable SQL is not enough)
 * and one DDL file, with no edit to the backend's logic.
 */
enum Dialect {
    /** PostgreSQL 10 or newer. */
    POSTGRESQL(
            "postgresql",
            "FLOOR(EXTRACT(EPOCH FROM now()) * 1000)::BIGINT",
            // clock_timestamp(), not now(): now() is the transaction's start, which a grant may have
            // passed before a deletion it then waits behind committed. The cast rounds, which makes the
            // double of EXTRACT before PostgreSQL 14 exact to the microsecond.
            "(EXTRACT(EPOCH FROM clock_timestamp()) * 1000000)::BIGINT",
            "pg_backend_pid()",
            true,
            PostgresSql::new),
    /** MySQL 8 and MariaDB 10.5 or newer, through MariaDB Connector/J or MySQL Connector/J. */
    MYSQL(
            "mysql",
            "(TIMESTAMPDIFF(MICROSECOND, '1970-01-01 00:00:00', UTC_TIMESTAMP(6)) DIV 1000)",
            // The statement's start, in UTC: SYSDATE(6) is the session's local time (ambiguous when
            // daylight saving ends) and becomes NOW() under --sysdate-is-now; a grant that waited for the
            // row finds it and steps its token, and a missing row is read again by a later statement.
            "TIMESTAMPDIFF(MICROSECOND, '1970-01-01 00:00:00', UTC_TIMESTAMP(6))",
            "CONNECTION_ID()",
            false,
            MysqlSql::new),
    /** H2 2.x, in memory, file or server mode. */
    H2(
            "h2",
            "CAST(EXTRACT(EPOCH FROM CURRENT_TIMESTAMP) * 1000 AS BIGINT)",
            // H2 has no clock of the statement: CURRENT_TIMESTAMP is the start of the first command of the
            // transaction that reads it, by the JVM's clock (Instant.now), in microseconds.
            "CAST(EXTRACT(EPOCH FROM CURRENT_TIMESTAMP) * 1000000 AS BIGINT)",
            "SESSION_ID()",
            false,
            PortableSql::new);

    private final String resource;
    private final String nowMillis;
    private final String nowMicros;
    private final String sessionId;
    private final boolean notifies;
    private final Function<Tables, PortableSql> sql;

    Dialect(
            String resource,
            String nowMillis,
            String nowMicros,
            String sessionId,
            boolean notifies,
            Function<Tables, PortableSql> sql) {
        this.resource = resource;
        this.nowMillis = nowMillis;
        this.nowMicros = nowMicros;
        this.sessionId = sessionId;
        this.notifies = notifies;
        this.sql = sql;
    }

    /** The statements of this database against the given tables. */
    PortableSql sql(Tables tables) {
        return sql.apply(tables);
    }

    /** The SQL expression naming the session behind a connection. */
    String sessionIdSql() {
        return sessionId;
    }

    /** The SQL expression for "now" in milliseconds since the epoch, by the database's clock. */
    String nowMillis() {
        return nowMillis;
    }

    /**
     * The SQL expression for "now" in microseconds since the epoch, by the database's clock: the floor of
     * fencing tokens ({@link Tables#nextToken}), read by the statement that finds (or creates) the row.
     */
    String nowMicros() {
        return nowMicros;
    }

    /**
     * Whether waiters can block on named locks that holders keep ({@code GET_LOCK}, {@link WakeBeacons},
     * {@link WakeWatchers}): MySQL and MariaDB.
     */
    boolean hasWakeLocks() {
        return this == MYSQL;
    }

    /** Whether the database can push wake-ups to waiters (LISTEN/NOTIFY). */
    boolean notifies() {
        return notifies;
    }

    /** The classpath resource holding this dialect's DDL. */
    String ddlResource() {
        return "/dev/dlock/jdbc/" + resource + ".sql";
    }

    /**
     * The dialect of a JDBC URL, by its sub-protocol.
     *
     * @throws IllegalArgumentException for another database
     */
    static Dialect ofUrl(String url) {
        String lower = url.toLowerCase(Locale.ROOT);
        if (lower.startsWith("jdbc:postgresql:")) {
            return POSTGRESQL;
        }
        if (lower.startsWith("jdbc:mariadb:") || lower.startsWith("jdbc:mysql:")) {
            return MYSQL;
        }
        if (lower.startsWith("jdbc:h2:")) {
            return H2;
        }
        throw new IllegalArgumentException("unsupported JDBC URL '" + url
                + "': dlock-jdbc supports jdbc:postgresql:, jdbc:mariadb:, jdbc:mysql: and jdbc:h2:");
    }

    /**
     * The dialect of a connected database, by the product name its driver reports.
     *
     * @throws IllegalArgumentException for another database
     */
    static Dialect ofProduct(String productName) {
        String lower = productName.toLowerCase(Locale.ROOT);
        if (lower.contains("postgresql")) {
            return POSTGRESQL;
        }
        if (lower.contains("mysql") || lower.contains("mariadb")) {
            return MYSQL;
        }
        if (lower.equals("h2")) {
            return H2;
        }
        throw new IllegalArgumentException(
                "unsupported database '" + productName + "': dlock-jdbc supports PostgreSQL, MySQL, MariaDB and H2");
    }

    /**
     * The DDL statements creating the lease tables, with the prefix filled in.
     *
     * @param prefix a validated table prefix
     */
    List<String> ddl(String prefix) {
        String text;
        try (InputStream in = Dialect.class.getResourceAsStream(ddlResource())) {
            if (in == null) {
                throw new IllegalStateException("missing resource " + ddlResource());
            }
            text = new String(in.readAllBytes(), StandardCharsets.UTF_8);
        } catch (IOException e) {
            throw new IllegalStateException("cannot read " + ddlResource(), e);
        }
        List<String> statements = new ArrayList<>();
        StringBuilder current = new StringBuilder();
        for (String line : text.split("\n")) {
            if (line.strip().startsWith("--")) {
                continue;
            }
            current.append(line).append('\n');
            if (line.strip().endsWith(";")) {
                String statement = current.toString().strip();
                statements.add(statement.substring(0, statement.length() - 1).replace("${prefix}", prefix));
                current.setLength(0);
            }
        }
        return statements;
    }
}
