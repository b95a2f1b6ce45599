package dev.dlock.spring;

import dev.dlock.testsupport.FreePorts;
import java.util.List;
import java.util.Map;
import org.apache.curator.test.TestingServer;

/**
 * The starter contract on ZooKeeper (a server run in this JVM by curator-test), reached through the
 * application's own {@code CuratorFramework} bean; the store that is down is a {@code zookeeper://} URI of
 * a port nothing listens on.
 */
class ZooKeeperContractStarterTest extends StarterContractTest {
    private TestingServer zookeeper;
    private int downPort;

    @Override
    void startStore() throws Exception {
        zookeeper = new TestingServer(true);
        downPort = FreePorts.next();
    }

    @Override
    void stopStore() throws Exception {
        if (zookeeper != null) {
            zookeeper.close();
        }
    }

    @Override
    Map<String, Object> storeProperties() {
        return Map.of("test.zookeeper.connect", zookeeper.getConnectString());
    }

    @Override
    String peerUri() {
        return "zookeeper://" + zookeeper.getConnectString();
    }

    @Override
    Map<String, Object> downStoreProperties() {
        return Map.of("dlock.uri", "zookeeper://127.0.0.1:" + downPort);
    }

    @Override
    String downStoreText() {
        return "the lock store at zookeeper://127.0.0.1:" + downPort;
    }

    @Override
    List<String> unusedStoreAutoConfigurations() {
        return List.of(REDIS_AUTO_CONFIGURATION, JDBC_AUTO_CONFIGURATION);
    }
}
