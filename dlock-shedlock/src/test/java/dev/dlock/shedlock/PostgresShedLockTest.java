package dev.dlock.shedlock;

import org.junit.jupiter.api.AfterAll;

/** The kit on the machine's PostgreSQL, in tables of this class's own prefix. */
class PostgresShedLockTest extends ShedLockKitTest {
    private static final String PREFIX = SqlDatabases.prefix();

    @AfterAll
    static void dropTables() throws Exception {
        SqlDatabases.dropTables(SqlDatabases.POSTGRES, PREFIX);
    }

    @Override
    String uri() {
        return SqlDatabases.uri(SqlDatabases.POSTGRES, PREFIX);
    }
}
