package dev.dlock.jdbc;

class H2BehaviourTest extends DatabaseBehaviourTest {
    @Override
    String url() {
        return "jdbc:h2:mem:behaviour;DB_CLOSE_DELAY=-1";
    }

    @Override
    String unreachableUrl(int port) {
        return TestDatabases.h2(port, "nothing-here");
    }
}
