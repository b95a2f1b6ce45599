package dev.dlock.shedlock;

import org.junit.jupiter.api.AfterAll;

/** The kit on the machine's MariaDB, in tables of this class's own prefix. */
class MariaDbShedLockTest extends ShedLockKitTest {
    private static final String PREFIX = SqlDatabases.prefix();

    @AfterAll
    static void dropTables() throws Exception {
        SqlDatabases.dropTables(SqlDatabases.MARIADB, PREFIX);
    }

    @Override
    String uri() {
        return SqlDatabases.uri(SqlDatabases.MARIADB, PREFIX);
    }
}
