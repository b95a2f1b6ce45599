package dev.dlock.jdbc;

class PostgresBehaviourTest extends DatabaseBehaviourTest {
    @Override
    String url() {
        return TestDatabases.postgres(TestDatabases.PG_PORT);
    }

    @Override
    Dialect dialect() {
        return Dialect.POSTGRESQL;
    }

    @Override
    String unreachableUrl(int port) {
        return TestDatabases.postgres(port);
    }
}
