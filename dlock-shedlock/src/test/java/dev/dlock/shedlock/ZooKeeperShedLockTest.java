package dev.dlock.shedlock;

import org.apache.curator.test.TestingServer;
import org.junit.jupiter.api.AfterAll;
import org.junit.jupiter.api.BeforeAll;

/**
 * The kit on a ZooKeeper server run in this JVM (curator-test). Its holds live as long as the client's
 * session, so here the client's watchdog, not the store, ends a minimum hold and an expired
 * {@code lockAtMostFor}.
 */
class ZooKeeperShedLockTest extends ShedLockKitTest {
    private static TestingServer zookeeper;

    @BeforeAll
    static void startZooKeeper() throws Exception {
        zookeeper = new TestingServer(true);
    }

    @AfterAll
    static void stopZooKeeper() throws Exception {
        zookeeper.close();
    }

    @Override
    boolean storeExpiresHolds() {
        return false; // the hold lives with the client's session
    }

    @Override
    String uri() {
        return "zookeeper://" + zookeeper.getConnectString();
    }
}
