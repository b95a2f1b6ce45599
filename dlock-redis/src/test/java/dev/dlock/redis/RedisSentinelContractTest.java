package dev.dlock.redis;

import static org.assertj.core.api.Assertions.assertThat;

import dev.dlock.Lease;
import dev.dlock.LockClient;
import dev.dlock.tck.LockContractTest;
import java.time.Duration;
import org.junit.jupiter.api.AfterAll;
import org.junit.jupiter.api.BeforeAll;
import org.junit.jupiter.api.Test;

/**
 * The whole contract through Sentinel (one master, one replica, three Sentinels) on the Sentinel default
 * of replica acknowledgements (every grant and renewal waits for the replica), with the hold-back after a
 * restart switched off as in {@link RedisContractTest}. Stopping the store kills both data nodes;
 * starting it brings them back empty (no persistence), the replica in sync. Its own case checks that the
 * acknowledgements are on: a grant sends {@code WAIT} to the master.
 */
class RedisSentinelContractTest extends LockContractTest {
    private static RedisSentinelServers servers;

    @BeforeAll
    static void startServers() {
        servers = RedisSentinelServers.startReplicatingDirectly();
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
    protected void stopStore() {
        servers.killDataNodes();
    }

    @Override
    protected void startStore() {
        servers.restartDataNodes();
    }

    @Test
    void grantsWaitForTheReplicaOnTheDefaultUri() throws Exception {
        int master = servers.currentMasterPort();
        long before = waitCalls(master);
        try (Lease lease = client().lock("acknowledged").acquire(Duration.ofSeconds(5))) {
            assertThat(lease.isValid()).isTrue();
            assertThat(waitCalls(master)).as("WAIT calls on the master").isGreaterThan(before);
        }
    }

    private static long waitCalls(int port) {
        for (String line : ((String) Resp.call(port, "INFO", "commandstats")).split("\r\n")) {
            if (line.startsWith("cmdstat_wait:")) {
                String calls = line.substring(line.indexOf("calls=") + 6);
                return Long.parseLong(calls.substring(0, calls.indexOf(',')));
            }
        }
        return 0;
    }
}
