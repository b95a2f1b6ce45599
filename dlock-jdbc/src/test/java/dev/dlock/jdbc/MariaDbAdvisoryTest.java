package dev.dlock.jdbc;

class MariaDbAdvisoryTest extends AdvisoryTest {
    @Override
    String url() {
        return TestDatabases.mariadb(TestDatabases.MARIADB_PORT);
    }
}
