package dev.dlock.redis;

import dev.dlock.LockClient;
import dev.dlock.tck.LockContractTest;
import org.junit.jupiter.api.extension.AfterAllCallback;
import org.junit.jupiter.api.extension.BeforeAllCallback;
import org.junit.jupiter.api.extension.ExtensionContext;

/**
 * The whole contract on Redlock; "the store is down" kills every master, "back" restarts them without
 * their data. A subclass registers {@link Masters} with the number of masters to run.
 */
abstract class RedlockContractSuite extends LockContractTest {
    /** The masters of one test class: started before its first test, stopped after its last. */
    static final class Masters implements BeforeAllCallback, AfterAllCallback {
        private final int count;
        private RedlockServers servers;

        Masters(int count) {
            this.count = count;
        }

        @Override
        public void beforeAll(ExtensionContext context) {
            servers = new RedlockServers(count);
        }

        @Override
        public void afterAll(ExtensionContext context) {
            servers.close();
        }
    }

    /** The masters this class runs on. */
    abstract Masters masters();

    private RedlockServers servers() {
        return masters().servers;
    }

    @Override
    protected LockClient.Builder newClientBuilder() {
        return LockClient.builder(servers().uri());
    }

    @Override
    protected boolean offersFairLocks() {
        return false;
    }

    @Override
    protected boolean offersSemaphores() {
        return false;
    }

    @Override
    protected void stopStore() {
        servers().all().forEach(RedisServer::kill);
    }

    @Override
    protected void startStore() {
        servers().all().forEach(RedisServer::restart);
    }
}
