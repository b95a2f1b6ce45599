package dev.dlock.integration;

import java.time.Duration;
import org.apache.curator.test.InstanceSpec;
import org.apache.curator.test.TestingServer;
import org.junit.jupiter.api.AfterAll;
import org.junit.jupiter.api.BeforeAll;

/**
 * The leader initiator on a ZooKeeper server run in this JVM (curator-test). A hold lives as long as the
 * client's session, so a paused leader is replaced once the server expires its session: the session
 * timeout stands for the lease here (a short tick time allows a short one).
 */
class ZooKeeperLeaderInitiatorTest extends LeaderInitiatorContract {
    private static final Duration SESSION = Duration.ofSeconds(3);
    private static TestingServer zookeeper;

    @BeforeAll
    static void startZooKeeper() throws Exception {
        zookeeper = new TestingServer(new InstanceSpec(null, -1, -1, -1, true, -1, 200, -1), true);
    }

    @AfterAll
    static void stopZooKeeper() throws Exception {
        zookeeper.close();
    }

    @Override
    String uri(int port) {
        return "zookeeper://127.0.0.1:" + port + "?sessionTimeout=" + SESSION.toMillis();
    }

    @Override
    int storePort() {
        return zookeeper.getPort();
    }

    @Override
    Duration storeLease() {
        return SESSION;
    }
}
