package dev.dlock.jdbc;

class H2AutoCommitOffTest extends AutoCommitOffTest {
    @Override
    String url() {
        return "jdbc:h2:mem:acoff;DB_CLOSE_DELAY=-1";
    }
}
