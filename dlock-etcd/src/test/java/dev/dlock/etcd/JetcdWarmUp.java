package dev.dlock.etcd;

import io.etcd.jetcd.ByteSequence;
import io.etcd.jetcd.Client;
import java.nio.charset.StandardCharsets;
import java.util.concurrent.TimeUnit;

/**
 * Loads jetcd's gRPC, Netty and Vert.x code once per test JVM, with one plain read of a running server
 * and no dlock timeout. A JVM's first etcd connect spends 1 to 5 s on that loading on a loaded two-core
 * machine, partly while the open's request is timed; the suites' operation timeouts (2 s in the contract
 * suite) are about the store, so each etcd test class calls this before its first client, as an
 * application that used jetcd before would. {@link EtcdConnectTest} tests the first connect itself, in a
 * child JVM.
 */
final class JetcdWarmUp {
    private static boolean done;

    private JetcdWarmUp() {}

    static synchronized void once(String clientUrl) throws Exception {
        if (done) {
            return;
        }
        try (Client client = Client.builder().endpoints(clientUrl).build()) {
            client.getKVClient()
                    .get(ByteSequence.from("warm-up", StandardCharsets.UTF_8))
                    .get(60, TimeUnit.SECONDS);
        }
        done = true;
    }
}
