package dev.dlock.jdbc;

class PostgresAutoCommitOffTest extends AutoCommitOffTest {
    @Override
    String url() {
        return TestDatabases.postgres(TestDatabases.PG_PORT);
    }
}
