package dev.dlock.jdbc;

class PostgresBehaviourTest extends DatabaseBehaviourTest {
    @Override
    String url() {
        return TestDatabases.postgres(TestDatabases.PG_PORT);
    }

    @Override
    String unreachableUrl(int port) {
        return TestDatabases.postgres(port);
    }
}
