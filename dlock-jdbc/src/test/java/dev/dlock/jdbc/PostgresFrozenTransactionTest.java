package dev.dlock.jdbc;

class PostgresFrozenTransactionTest extends FrozenTransactionTest {
    @Override
    String url() {
        return TestDatabases.postgres(TestDatabases.PG_PORT);
    }
}
