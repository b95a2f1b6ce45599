/**
 * The JDBC backend of dlock: locks in PostgreSQL, MySQL, MariaDB or H2 through a lease table, with
 * database time, durable fencing tokens and LISTEN/NOTIFY wake-ups on PostgreSQL ({@link
 * dev.dlock.jdbc.JdbcBackends}), plus helpers that guard the application's own tables with fencing tokens
 * and conditional updates ({@link dev.dlock.jdbc.FencedUpdate}, {@link dev.dlock.jdbc.StockDeduction}).
 */
package dev.dlock.jdbc;
