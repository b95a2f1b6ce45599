package dev.dlock.jdbc;

class MariaDbAutoCommitOffTest extends AutoCommitOffTest {
    @Override
    String url() {
        return TestDatabases.mariadb(TestDatabases.MARIADB_PORT);
    }
}
