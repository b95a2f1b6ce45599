package dev.dlock.testsupport;

import static org.assertj.core.api.Assertions.assertThat;

import java.net.InetSocketAddress;
import java.net.ServerSocket;
import java.util.HashSet;
import java.util.Set;
import org.junit.jupiter.api.Test;

class FreePortsTest {
    @Test
    void portsAreBelowTheKernelsRangeForOutgoingConnectionsAndNeverHandedOutTwice() throws Exception {
        Set<Integer> seen = new HashSet<>();
        for (int i = 0; i < 300; i++) {
            int port = FreePorts.next();
            assertThat(port).isBetween(10_000, 19_999);
            assertThat(seen.add(port)).as("port %d handed out again", port).isTrue();
            try (ServerSocket server = new ServerSocket()) {
                server.bind(new InetSocketAddress("127.0.0.1", port)); // free when handed out
            }
        }
    }

    @Test
    void aPairLeavesTheSecondPortFreeToo() throws Exception {
        int port = FreePorts.nextPair(10_000);
        try (ServerSocket bus = new ServerSocket()) {
            bus.bind(new InetSocketAddress("127.0.0.1", port + 10_000));
        }
    }

    @Test
    void eachLaneHasAShareOfItsOwn() {
        assertThat(FreePorts.share(null, null)).containsExactly(10_000, 10_000);
        assertThat(FreePorts.share("1", "3")).containsExactly(10_000, 3_333);
        assertThat(FreePorts.share("2", "3")).containsExactly(13_333, 3_333);
        assertThat(FreePorts.share("3", "3")).containsExactly(16_666, 3_333);
        assertThat(FreePorts.share("x", "4")).as("a bad lane is lane 1").containsExactly(10_000, 2_500);
    }
}
