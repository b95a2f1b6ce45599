package dev.dlock.jdbc;

import java.sql.Connection;
import java.sql.PreparedStatement;
import java.sql.ResultSet;
import java.sql.SQLException;
import java.util.Objects;

/**
 * Takes an amount off a quantity column without ever going below zero, the two ways a database does it
 * without a distributed lock: optimistic (one conditional {@code UPDATE}) and pessimistic ({@code SELECT
 * ... FOR UPDATE}, then {@code UPDATE}, in one transaction).
 *
 * <pre>{@code
 * StockDeduction stock = StockDeduction.of("product_stock", "product_id", "number");
 * boolean sold = stock.deductOptimistic(connection, productId, 1);
 * }</pre>
 *
 * <p>Optimistic: {@code UPDATE t SET qty = qty - ? WHERE id = ? AND qty >= ?}. The database checks and
 * writes in one step under its row lock, so concurrent callers can never oversell, and nobody waits
 * longer than one row update. Pessimistic: the row is read {@code FOR UPDATE} (other deductions of the
 * same row wait), checked in Java, and written. Use it when the decision needs more than the quantity
 * (for example other columns or other tables read under the same lock).
 *
 * <p>Values are bind parameters; the table and column names are checked to be plain identifiers.
 */
public final class StockDeduction {
    private final String optimisticSql;
    private final String selectForUpdateSql;
    private final String updateSql;

    private StockDeduction(String table, String idColumn, String quantityColumn) {
        String t = SqlIdentifiers.table(table);
        String id = SqlIdentifiers.column(idColumn, "id column");
        String qty = SqlIdentifiers.column(quantityColumn, "quantity column");
        this.optimisticSql =
                "UPDATE " + t + " SET " + qty + " = " + qty + " - ? WHERE " + id + " = ? AND " + qty + " >= ?";
        this.selectForUpdateSql = "SELECT " + qty + " FROM " + t + " WHERE " + id + " = ? FOR UPDATE";
        this.updateSql = "UPDATE " + t + " SET " + qty + " = " + qty + " - ? WHERE " + id + " = ?";
    }

    /**
     * A helper for one table.
     *
     * @param table the table, optionally {@code schema.table}
     * @param idColumn the column identifying the item
     * @param quantityColumn the integer column holding the quantity left
     * @return the helper
     * @throws IllegalArgumentException when a name is not a plain SQL identifier
     */
    public static StockDeduction of(String table, String idColumn, String quantityColumn) {
        return new StockDeduction(table, idColumn, quantityColumn);
    }

    /**
     * Deducts with one conditional update.
     *
     * @param connection the application's connection; its transaction, if any, is left to the caller
     * @param id the item
     * @param amount how much to take, at least 1
     * @return true if taken, false if the item is missing or has less than {@code amount} left
     * @throws SQLException from the driver
     */
    public boolean deductOptimistic(Connection connection, Object id, long amount) throws SQLException {
        check(connection, id, amount);
        try (PreparedStatement ps = connection.prepareStatement(optimisticSql)) {
            ps.setLong(1, amount);
            ps.setObject(2, id);
            ps.setLong(3, amount);
            return ps.executeUpdate() > 0;
        }
    }

    /**
     * Deducts under a row lock: {@code SELECT ... FOR UPDATE}, check, {@code UPDATE}. On a connection in
     * auto-commit mode it runs and commits its own transaction; inside the caller's transaction it joins
     * it and leaves commit or rollback to the caller (the row stays locked until then).
     *
     * @param connection the application's connection
     * @param id the item
     * @param amount how much to take, at least 1
     * @return true if taken, false if the item is missing or has less than {@code amount} left
     * @throws SQLException from the driver; its own transaction is rolled back first
     */
    public boolean deductPessimistic(Connection connection, Object id, long amount) throws SQLException {
        check(connection, id, amount);
        if (!connection.getAutoCommit()) {
            return deductLocked(connection, id, amount);
        }
        return Transactions.plainTransaction(connection, () -> deductLocked(connection, id, amount));
    }

    private boolean deductLocked(Connection connection, Object id, long amount) throws SQLException {
        long left;
        try (PreparedStatement ps = connection.prepareStatement(selectForUpdateSql)) {
            ps.setObject(1, id);
            try (ResultSet rs = ps.executeQuery()) {
                if (!rs.next()) {
                    return false;
                }
                left = rs.getLong(1);
            }
        }
        if (left < amount) {
            return false;
        }
        try (PreparedStatement ps = connection.prepareStatement(updateSql)) {
            ps.setLong(1, amount);
            ps.setObject(2, id);
            return ps.executeUpdate() > 0;
        }
    }

    private static void check(Connection connection, Object id, long amount) {
        Objects.requireNonNull(connection, "connection must not be null");
        Objects.requireNonNull(id, "id must not be null");
        if (amount < 1) {
            throw new IllegalArgumentException("amount must be at least 1, got " + amount);
        }
    }
}
