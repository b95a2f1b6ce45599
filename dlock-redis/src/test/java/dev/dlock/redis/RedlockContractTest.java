package dev.dlock.redis;

import dev.dlock.LockClient;
import dev.dlock.tck.LockContractTest;
import org.junit.jupiter.api.AfterAll;
import org.junit.jupiter.api.BeforeAll;

/**
 * The whole contract on Redlock over 3 masters; "the store is down" kills all of them, "back" restarts
 * them without their data.
 */
class RedlockContractTest extends LockContractTest {
    private static RedlockServers servers;

    @BeforeAll
    static void startServers() {
        servers = new RedlockServers(3);
    }

    @AfterAll
    static void stopServers() {
        servers.close();
    }

    @Override
    protected LockClient.Builder newClientBuilder() {
        return LockClient.builder(servers.uri());
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
        servers.all().forEach(RedisServer::kill);
    }

    @Override
    protected void startStore() {
        servers.all().forEach(RedisServer::restart);
    }
}
