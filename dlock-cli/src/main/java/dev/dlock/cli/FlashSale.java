package dev.dlock.cli;

import dev.dlock.DistributedLock;
import dev.dlock.Lease;
import dev.dlock.jdbc.StockDeduction;
import java.sql.Connection;
import java.sql.PreparedStatement;
import java.sql.ResultSet;
import java.sql.SQLException;
import java.sql.Statement;
import java.time.Duration;
import java.util.Locale;

/**
 * The flash sale of the demo: one item with a stock, buyers who each try to buy one unit, and the ways to
 * keep them from overselling. Every statement uses bind parameters; the SQL is plain enough for H2,
 * PostgreSQL and MySQL/MariaDB.
 *
 * <p>Each purchase first reads the stock without any lock and turns the buyer away if it is gone (what a
 * shop does before it takes a lock), then, by strategy, with the "think" time (the shop's own work on the
 * order) spent while the strategy's protection is held:
 *
 * <ul>
 *   <li>{@code none}: read the stock, think, write back the read value minus one, insert the order. Two
 *       buyers who read the same value both buy: the oversell.
 *   <li>{@code optimistic}: one conditional {@code UPDATE ... SET qty = qty - 1 WHERE qty >= 1}
 *       ({@link StockDeduction#deductOptimistic}), think, insert the order, in one transaction.
 *   <li>{@code pessimistic}: {@code SELECT ... FOR UPDATE}, check, update ({@link
 *       StockDeduction#deductPessimistic}), think, insert, in one transaction.
 *   <li>{@code dlock}: the {@code none} steps while holding a dlock lock; the order records the fencing token.
 * </ul>
 *
 * <p>Concurrency: one instance per connection (a connection is not shared between threads). Failure modes:
 * SQL errors propagate; the caller counts them.
 */
final class FlashSale {
    static final String STOCK = "dlock_demo_stock";
    static final String ORDERS = "dlock_demo_orders";
    static final int ITEM = 1;

    /** How buyers are kept from overselling. */
    enum Strategy {
        NONE,
        OPTIMISTIC,
        PESSIMISTIC,
        DLOCK;

        String label() {
            return name().toLowerCase(Locale.ROOT);
        }
    }

    private static final StockDeduction DEDUCTION = StockDeduction.of(STOCK, "item_id", "qty");

    private final Connection connection;
    private final Duration think;

    FlashSale(Connection connection, Duration think) {
        this.connection = connection;
        this.think = think;
    }

    /** Creates fresh tables with {@code stock} units of the item (dropping those of an earlier run). */
    static void setUp(Connection connection, int stock) throws SQLException {
        connection.setAutoCommit(true);
        try (Statement statement = connection.createStatement()) {
            statement.execute("DROP TABLE IF EXISTS " + ORDERS);
            statement.execute("DROP TABLE IF EXISTS " + STOCK);
            statement.execute("CREATE TABLE " + STOCK + " (item_id INT NOT NULL PRIMARY KEY, qty INT NOT NULL)");
            statement.execute(
                    "CREATE TABLE " + ORDERS + " (buyer INT NOT NULL, item_id INT NOT NULL, fencing_token BIGINT)");
        }
        try (PreparedStatement insert =
                connection.prepareStatement("INSERT INTO " + STOCK + " (item_id, qty) VALUES (?, ?)")) {
            insert.setInt(1, ITEM);
            insert.setInt(2, stock);
            insert.executeUpdate();
        }
    }

    /** Removes the demo's tables. */
    static void tearDown(Connection connection) throws SQLException {
        connection.setAutoCommit(true);
        try (Statement statement = connection.createStatement()) {
            statement.execute("DROP TABLE IF EXISTS " + ORDERS);
            statement.execute("DROP TABLE IF EXISTS " + STOCK);
        }
    }

    /** How many orders were placed. */
    static int orders(Connection connection) throws SQLException {
        try (Statement statement = connection.createStatement();
                ResultSet rows = statement.executeQuery("SELECT COUNT(*) FROM " + ORDERS)) {
            rows.next();
            return rows.getInt(1);
        }
    }

    /**
     * One buyer's attempt.
     *
     * @param lock the dlock lock for {@link Strategy#DLOCK}, else null
     * @return true if the buyer got a unit
     */
    boolean buy(Strategy strategy, int buyer, DistributedLock lock) throws SQLException, InterruptedException {
        connection.setAutoCommit(true);
        if (readStock(false) <= 0) {
            return false;
        }
        return switch (strategy) {
            case NONE -> buyUnguarded(buyer, null);
            case OPTIMISTIC -> buyOptimistic(buyer);
            case PESSIMISTIC -> buyPessimistic(buyer);
            case DLOCK -> {
                try (Lease lease = lock.acquire(Duration.ofSeconds(30))) {
                    yield buyUnguarded(buyer, lease.fencingToken());
                }
            }
        };
    }

    /** Reads the stock once, so that the first buyer does not pay for loading classes and preparing. */
    void warmUp() throws SQLException {
        connection.setAutoCommit(true);
        readStock(false);
    }

    private boolean buyUnguarded(int buyer, Long token) throws SQLException, InterruptedException {
        int stock = readStock(false);
        if (stock <= 0) {
            return false;
        }
        pause();
        try (PreparedStatement update =
                connection.prepareStatement("UPDATE " + STOCK + " SET qty = ? WHERE item_id = ?")) {
            update.setInt(1, stock - 1);
            update.setInt(2, ITEM);
            update.executeUpdate();
        }
        insertOrder(buyer, token);
        return true;
    }

    private boolean buyOptimistic(int buyer) throws SQLException, InterruptedException {
        return inTransaction(() -> {
            if (!DEDUCTION.deductOptimistic(connection, ITEM, 1)) {
                return false;
            }
            pause();
            insertOrder(buyer, null);
            return true;
        });
    }

    private boolean buyPessimistic(int buyer) throws SQLException, InterruptedException {
        return inTransaction(() -> {
            if (!DEDUCTION.deductPessimistic(connection, ITEM, 1)) {
                return false;
            }
            pause();
            insertOrder(buyer, null);
            return true;
        });
    }

    private interface Step {
        boolean run() throws SQLException, InterruptedException;
    }

    /** Runs a step in one transaction: committed when it returns true, rolled back otherwise. */
    private boolean inTransaction(Step step) throws SQLException, InterruptedException {
        connection.setAutoCommit(false);
        try {
            boolean bought = step.run();
            if (bought) {
                connection.commit();
            } else {
                connection.rollback();
            }
            return bought;
        } catch (SQLException | InterruptedException | RuntimeException e) {
            connection.rollback();
            throw e;
        } finally {
            connection.setAutoCommit(true);
        }
    }

    private int readStock(boolean forUpdate) throws SQLException {
        try (PreparedStatement select = connection.prepareStatement(
                "SELECT qty FROM " + STOCK + " WHERE item_id = ?" + (forUpdate ? " FOR UPDATE" : ""))) {
            select.setInt(1, ITEM);
            try (ResultSet rows = select.executeQuery()) {
                if (!rows.next()) {
                    throw new SQLException("no stock row for item " + ITEM + " in " + STOCK);
                }
                return rows.getInt(1);
            }
        }
    }

    private void insertOrder(int buyer, Long token) throws SQLException {
        try (PreparedStatement insert = connection.prepareStatement(
                "INSERT INTO " + ORDERS + " (buyer, item_id, fencing_token) VALUES (?, ?, ?)")) {
            insert.setInt(1, buyer);
            insert.setInt(2, ITEM);
            if (token == null) {
                insert.setNull(3, java.sql.Types.BIGINT);
            } else {
                insert.setLong(3, token);
            }
            insert.executeUpdate();
        }
    }

    private void pause() throws InterruptedException {
        if (!think.isZero()) {
            Thread.sleep(think.toMillis(), think.toNanosPart() % 1_000_000);
        }
    }
}
