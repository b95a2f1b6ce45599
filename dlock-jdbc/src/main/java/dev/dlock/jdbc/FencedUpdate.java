package dev.dlock.jdbc;

import java.sql.Connection;
import java.sql.PreparedStatement;
import java.sql.SQLException;
import java.util.ArrayList;
import java.util.List;
import java.util.Map;
import java.util.Objects;

/**
 * Guards a row of the application's own table with fencing tokens: an update carries the token of the
 * lease under which it is made, and the database refuses it when a newer token has already written the
 * row. A holder that lost its lock without noticing (a long pause, a partition) can then no longer
 * overwrite the work of the next holder.
 *
 * <p>The table needs a nullable {@code BIGINT} column for the token. One statement does the check and the
 * write, so it is atomic in every database:
 *
 * <pre>{@code
 * UPDATE <table> SET <col1> = ?, ..., <tokenColumn> = ? WHERE <keyColumn> = ?
 *     AND (<tokenColumn> IS NULL OR <tokenColumn> <= ?)
 * }</pre>
 *
 * <p>An equal token is accepted, so one holder may write the row several times under one lease; only
 * tokens older than the stored one are refused. Values are bind parameters; the table and column names
 * are checked to be plain identifiers.
 *
 * <pre>{@code
 * FencedUpdate accounts = FencedUpdate.of("accounts", "id", "fence_token");
 * try (Lease lease = client.lock("account-42").acquire()) {
 *     boolean written = accounts.update(connection, 42, lease.fencingToken(), Map.of("balance", 100));
 * }
 * }</pre>
 */
public final class FencedUpdate {
    private final String table;
    private final String keyColumn;
    private final String tokenColumn;

    private FencedUpdate(String table, String keyColumn, String tokenColumn) {
        this.table = SqlIdentifiers.table(table);
        this.keyColumn = SqlIdentifiers.column(keyColumn, "key column");
        this.tokenColumn = SqlIdentifiers.column(tokenColumn, "token column");
    }

    /**
     * A guard for one table.
     *
     * @param table the table, optionally {@code schema.table}
     * @param keyColumn the column identifying the row
     * @param tokenColumn the {@code BIGINT} column holding the last token that wrote the row
     * @return the guard
     * @throws IllegalArgumentException when a name is not a plain SQL identifier
     */
    public static FencedUpdate of(String table, String keyColumn, String tokenColumn) {
        return new FencedUpdate(table, keyColumn, tokenColumn);
    }

    /**
     * Writes columns of one row if no newer token has written it.
     *
     * @param connection the application's connection; its transaction, if any, is left to the caller
     * @param key the value of the key column
     * @param token the fencing token of the caller's lease
     * @param values column name to new value, at least one; names must be plain identifiers
     * @return true if the row was written, false if it is missing or a newer token wrote it
     * @throws SQLException from the driver
     * @throws IllegalArgumentException for a bad column name or no values
     */
    public boolean update(Connection connection, Object key, long token, Map<String, ?> values) throws SQLException {
        Objects.requireNonNull(connection, "connection must not be null");
        Objects.requireNonNull(key, "key must not be null");
        if (values == null || values.isEmpty()) {
            throw new IllegalArgumentException("values must name at least one column to write");
        }
        StringBuilder sql = new StringBuilder("UPDATE ").append(table).append(" SET ");
        List<Object> binds = new ArrayList<>();
        for (Map.Entry<String, ?> e : values.entrySet()) {
            String column = SqlIdentifiers.column(e.getKey(), "column");
            if (column.equalsIgnoreCase(tokenColumn) || column.equalsIgnoreCase(keyColumn)) {
                throw new IllegalArgumentException("values must not set the key or token column '" + column + "'");
            }
            sql.append(column).append(" = ?, ");
            binds.add(e.getValue());
        }
        sql.append(tokenColumn).append(" = ? WHERE ").append(keyColumn).append(" = ? AND (");
        sql.append(tokenColumn).append(" IS NULL OR ").append(tokenColumn).append(" <= ?)");
        try (PreparedStatement ps = connection.prepareStatement(sql.toString())) {
            int i = 1;
            for (Object value : binds) {
                ps.setObject(i++, value);
            }
            ps.setLong(i++, token);
            ps.setObject(i++, key);
            ps.setLong(i, token);
            return ps.executeUpdate() > 0;
        }
    }

    @Override
    public String toString() {
        return "FencedUpdate[" + table + "." + keyColumn + ", token " + tokenColumn + "]";
    }
}
