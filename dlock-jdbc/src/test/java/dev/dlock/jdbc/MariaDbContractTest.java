package dev.dlock.jdbc;

import org.junit.jupiter.api.extension.RegisterExtension;

/** The full contract on the machine's MariaDB. */
class MariaDbContractTest extends DatabaseContractTest {
    @RegisterExtension
    static final ProxiedDatabase DATABASE = ProxiedDatabase.mariadb("contract");

    @Override
    ProxiedDatabase database() {
        return DATABASE;
    }
}
