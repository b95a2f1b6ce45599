package dev.dlock.spring;

/**
 * The {@code dlock.jdbc.*} properties: used when the store is the application's {@code DataSource}.
 * With {@code dlock.uri}, use the URI parameters ({@code dlock.tablePrefix}, {@code dlock.createTables},
 * ...) instead.
 */
public class DlockJdbcProperties {
    /** The prefix of dlock's two table names (<prefix>locks and <prefix>entries). */
    private String tablePrefix = "dlock_";

    /**
     * Whether to create the tables at startup when they are missing. When false, the startup fails if
     * they do not exist.
     */
    private boolean createTables;

    /**
     * Whether exclusive locks use the database's advisory locks on one dedicated session instead of
     * lease rows (PostgreSQL, MySQL, MariaDB).
     */
    private boolean advisory;

    /** How many threads run the backend's blocking JDBC calls. */
    private int threads = 4;

    /** Creates the defaults. */
    public DlockJdbcProperties() {}

    /**
     * The table prefix.
     *
     * @return the prefix
     */
    public String getTablePrefix() {
        return tablePrefix;
    }

    /**
     * Sets the table prefix.
     *
     * @param tablePrefix 1 to 40 characters of {@code [a-z0-9_]}, not starting with a digit
     */
    public void setTablePrefix(String tablePrefix) {
        this.tablePrefix = tablePrefix;
    }

    /**
     * Whether missing tables are created.
     *
     * @return true to create them
     */
    public boolean isCreateTables() {
        return createTables;
    }

    /**
     * Sets whether missing tables are created.
     *
     * @param createTables true to create them
     */
    public void setCreateTables(boolean createTables) {
        this.createTables = createTables;
    }

    /**
     * Whether advisory locks are used.
     *
     * @return true for advisory locks
     */
    public boolean isAdvisory() {
        return advisory;
    }

    /**
     * Sets whether advisory locks are used.
     *
     * @param advisory true for advisory locks
     */
    public void setAdvisory(boolean advisory) {
        this.advisory = advisory;
    }

    /**
     * The JDBC thread count.
     *
     * @return the count
     */
    public int getThreads() {
        return threads;
    }

    /**
     * Sets the JDBC thread count.
     *
     * @param threads 1 to 64
     */
    public void setThreads(int threads) {
        this.threads = threads;
    }
}
