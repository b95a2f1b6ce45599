package dev.dlock.jdbc;

import dev.dlock.LockClient;
import dev.dlock.tck.LockContractTest;

/**
 * The full contract on one database ({@link ProxiedDatabase}); outages are faked by cutting its proxy.
 * A subclass names the database; it may build clients in another way ({@link #newClientBuilder}).
 */
abstract class DatabaseContractTest extends LockContractTest {
    /** The database of the subclass, a static {@code @RegisterExtension} field there. */
    abstract ProxiedDatabase database();

    @Override
    protected LockClient.Builder newClientBuilder() {
        return LockClient.builder(database().clientUri());
    }

    @Override
    protected void stopStore() {
        database().cut();
    }

    @Override
    protected void startStore() throws Exception {
        database().restoreAndWait();
    }
}
