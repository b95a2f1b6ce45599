package dev.dlock.etcd;

import static org.assertj.core.api.Assertions.assertThat;

import dev.dlock.Lease;
import dev.dlock.LockClient;
import dev.dlock.tck.JavadocExamples;
import dev.dlock.testsupport.EtcdServers;
import io.etcd.jetcd.Client;
import java.nio.file.Path;
import java.time.Duration;
import java.util.ArrayList;
import java.util.List;
import java.util.concurrent.TimeUnit;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.Timeout;

/**
 * The example of {@link EtcdBackends}' class javadoc, run against one etcd server; the javadoc holds a
 * copy of the region marked below, and {@link #javadocHoldsTheseExamples()} checks it is the same.
 */
@Timeout(value = 60, unit = TimeUnit.SECONDS)
class EtcdBackendsExamplesTest {
    private final List<Long> reports = new ArrayList<>();
    private String endpoint;

    @Test
    void javadocHoldsTheseExamples() {
        assertThat(JavadocExamples.check(
                        Path.of("src/main/java/dev/dlock/etcd/EtcdBackends.java"),
                        Path.of("src/test/java/dev/dlock/etcd/EtcdBackendsExamplesTest.java")))
                .containsExactly("etcd-client");
    }

    @Test
    void clientOfTheApplication() throws Exception {
        try (EtcdServers server = EtcdServers.single()) {
            endpoint = server.member(0).clientUrl();
            // example: etcd-client
            Client etcd = Client.builder().endpoints(endpoint).build();
            try (LockClient locks = LockClient.builder(EtcdBackends.of(etcd)).build()) {
                try (Lease lease = locks.lock("report").acquire(Duration.ofSeconds(5))) {
                    // pass lease.fencingToken() (a scaled etcd revision) to the resource you protect
                    writeReport(lease.fencingToken());
                }
            }
            etcd.close();
            // end example
            assertThat(reports).hasSize(1).allSatisfy(token -> assertThat(token).isPositive());
        }
    }

    private void writeReport(long fencingToken) {
        try (Client otherEtcd = Client.builder().endpoints(endpoint).build();
                LockClient other =
                        LockClient.builder(EtcdBackends.of(otherEtcd)).build()) {
            assertThat(other.lock("report").tryAcquire())
                    .as("held by the example")
                    .isEmpty();
        }
        reports.add(fencingToken);
    }
}
