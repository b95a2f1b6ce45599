package dev.dlock.jdbc;

import java.util.regex.Pattern;

/**
 * The backend's settings, shared by the {@code DataSource} builder and the URI parameters.
 *
 * @param tablePrefix prefix of the two table names (and their indexes), {@code [a-z_][a-z0-9_]{0,39}}
 * @param createTables whether to run the shipped DDL ({@code CREATE TABLE IF NOT EXISTS}) when opening
 * @param advisory whether exclusive locks use database advisory locks instead of the lease table
 * @param threads size of the backend's thread pool (and of the connection pool it creates for URIs)
 */
record JdbcOptions(String tablePrefix, boolean createTables, boolean advisory, int threads) {
    static final String DEFAULT_PREFIX = "dlock_";
    static final int DEFAULT_THREADS = 4;
    private static final Pattern PREFIX = Pattern.compile("[a-z_][a-z0-9_]{0,39}");

    static final JdbcOptions DEFAULTS = new JdbcOptions(DEFAULT_PREFIX, false, false, DEFAULT_THREADS);

    JdbcOptions {
        tablePrefix = checkPrefix(tablePrefix);
        if (threads < 1 || threads > 64) {
            throw new IllegalArgumentException("threads must be between 1 and 64, got " + threads);
        }
    }

    static String checkPrefix(String prefix) {
        if (prefix == null || !PREFIX.matcher(prefix).matches()) {
            throw new IllegalArgumentException("table prefix must match [a-z_][a-z0-9_]{0,39} (lower case, so that"
                    + " every database folds it alike), got " + (prefix == null ? "null" : "'" + prefix + "'"));
        }
        return prefix;
    }

    JdbcOptions withTablePrefix(String prefix) {
        return new JdbcOptions(prefix, createTables, advisory, threads);
    }

    JdbcOptions withCreateTables(boolean create) {
        return new JdbcOptions(tablePrefix, create, advisory, threads);
    }

    JdbcOptions withAdvisory(boolean on) {
        return new JdbcOptions(tablePrefix, createTables, on, threads);
    }

    JdbcOptions withThreads(int n) {
        return new JdbcOptions(tablePrefix, createTables, advisory, n);
    }
}
