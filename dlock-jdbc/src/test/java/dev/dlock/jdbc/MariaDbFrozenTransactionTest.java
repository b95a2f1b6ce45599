package dev.dlock.jdbc;

class MariaDbFrozenTransactionTest extends FrozenTransactionTest {
    @Override
    String url() {
        return TestDatabases.mariadb(TestDatabases.MARIADB_PORT);
    }
}
