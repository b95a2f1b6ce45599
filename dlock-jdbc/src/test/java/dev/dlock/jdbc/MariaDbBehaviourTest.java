package dev.dlock.jdbc;

class MariaDbBehaviourTest extends DatabaseBehaviourTest {
    @Override
    String url() {
        return TestDatabases.mariadb(TestDatabases.MARIADB_PORT);
    }

    @Override
    String unreachableUrl(int port) {
        return TestDatabases.mariadb(port);
    }
}
