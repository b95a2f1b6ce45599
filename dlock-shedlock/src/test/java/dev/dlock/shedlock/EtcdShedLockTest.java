package dev.dlock.shedlock;

import dev.dlock.testsupport.EtcdServers;
import org.junit.jupiter.api.AfterAll;
import org.junit.jupiter.api.BeforeAll;

/**
 * The kit on an etcd process started for this class (Debian's {@code etcd-server}). As on ZooKeeper, the
 * client's watchdog ends the holds, which live as long as the client's etcd lease.
 */
class EtcdShedLockTest extends ShedLockKitTest {
    private static EtcdServers etcd;

    @BeforeAll
    static void startEtcd() throws Exception {
        etcd = EtcdServers.single();
    }

    @AfterAll
    static void stopEtcd() {
        etcd.close();
    }

    @Override
    boolean storeExpiresHolds() {
        return false; // the hold lives with the client's session
    }

    @Override
    String uri() {
        return "etcd://" + etcd.hosts() + "/shedlock";
    }
}
