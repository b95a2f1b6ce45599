package dev.dlock.jdbc;

class PostgresAdvisoryTest extends AdvisoryTest {
    @Override
    String url() {
        return TestDatabases.postgres(TestDatabases.PG_PORT);
    }
}
