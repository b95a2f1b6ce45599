package dev.dlock.redis;

import dev.dlock.LockClient;
import dev.dlock.tck.LockContractTest;
import org.junit.jupiter.api.AfterAll;
import org.junit.jupiter.api.BeforeAll;

/** The whole contract against a three-master Redis Cluster this test builds, kills and restarts. */
class RedisClusterContractTest extends LockContractTest {
    private static RedisClusterServers cluster;

    @BeforeAll
    static void startCluster() {
        cluster = RedisClusterServers.start();
    }

    @AfterAll
    static void stopCluster() {
        cluster.close();
    }

    @Override
    protected LockClient.Builder newClientBuilder() {
        return LockClient.builder(cluster.uri());
    }

    @Override
    protected void stopStore() {
        cluster.killAll();
    }

    @Override
    protected void startStore() {
        cluster.restartAll();
    }
}
