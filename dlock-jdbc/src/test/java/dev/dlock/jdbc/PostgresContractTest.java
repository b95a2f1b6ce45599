package dev.dlock.jdbc;

import org.junit.jupiter.api.extension.RegisterExtension;

/** The full contract on the machine's PostgreSQL. */
class PostgresContractTest extends DatabaseContractTest {
    @RegisterExtension
    static final ProxiedDatabase DATABASE = ProxiedDatabase.postgres("contract");

    @Override
    ProxiedDatabase database() {
        return DATABASE;
    }
}
