package dev.dlock.redis;

import dev.dlock.LockClient;
import dev.dlock.tck.LockContractTest;
import org.junit.jupiter.api.AfterAll;
import org.junit.jupiter.api.BeforeAll;

/** The whole contract against a standalone {@code redis-server} this test starts, kills and restarts. */
class RedisContractTest extends LockContractTest {
    private static RedisServer server;

    @BeforeAll
    static void startServer() {
        server = RedisServer.start();
    }

    @AfterAll
    static void stopServer() {
        server.close();
    }

    @Override
    protected LockClient.Builder newClientBuilder() {
        return LockClient.builder(server.uri());
    }

    @Override
    protected void stopStore() {
        server.kill();
    }

    @Override
    protected void startStore() {
        server.restart();
    }
}
