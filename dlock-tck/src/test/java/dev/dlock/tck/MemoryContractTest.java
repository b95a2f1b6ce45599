package dev.dlock.tck;

import dev.dlock.LockClient;
import dev.dlock.mem.MemoryStore;

/** The whole contract against the in-memory backend. */
class MemoryContractTest extends LockContractTest {
    private static final MemoryStore STORE = MemoryStore.named("contract");

    @Override
    protected LockClient.Builder newClientBuilder() {
        return LockClient.builder("mem:contract");
    }

    @Override
    protected void stopStore() {
        STORE.goDown();
    }

    @Override
    protected void startStore() {
        STORE.comeBack();
    }

    @Override
    protected Runnable storeLosesItsState() {
        return STORE::forgetEverything;
    }
}
