package dev.dlock.spring;

import dev.dlock.testsupport.EtcdServers;
import dev.dlock.testsupport.FreePorts;
import java.util.Map;

/**
 * The starter contract on a real etcd process (Debian's {@code etcd-server}, started by this test) from an
 * {@code etcd://} URI in {@code dlock.uri}.
 */
class EtcdStarterTest extends StarterContractTest {
    private EtcdServers etcd;
    private int downPort;

    @Override
    void startStore() throws Exception {
        etcd = EtcdServers.single();
        downPort = FreePorts.next();
    }

    @Override
    void stopStore() {
        if (etcd != null) {
            etcd.close();
        }
    }

    @Override
    Map<String, Object> storeProperties() {
        return Map.of("dlock.uri", peerUri());
    }

    @Override
    String peerUri() {
        return "etcd://" + etcd.hosts() + "/starter";
    }

    @Override
    Map<String, Object> downStoreProperties() {
        return Map.of("dlock.uri", "etcd://127.0.0.1:" + downPort);
    }

    @Override
    String downStoreText() {
        return "the lock store at etcd://127.0.0.1:" + downPort + ": could not reach etcd";
    }
}
