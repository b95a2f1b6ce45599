package dev.dlock.jdbc;

import org.junit.jupiter.api.extension.RegisterExtension;

/** The full contract on H2 (a TCP server in this JVM holding an in-memory database). */
class H2ContractTest extends DatabaseContractTest {
    @RegisterExtension
    static final ProxiedDatabase DATABASE = ProxiedDatabase.h2("h2contract");

    @Override
    ProxiedDatabase database() {
        return DATABASE;
    }
}
