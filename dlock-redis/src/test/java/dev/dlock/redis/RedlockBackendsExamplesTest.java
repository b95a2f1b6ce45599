package dev.dlock.redis;

import static org.assertj.core.api.Assertions.assertThat;

import dev.dlock.Lease;
import dev.dlock.LockClient;
import dev.dlock.spi.LockBackendFactory;
import dev.dlock.tck.JavadocExamples;
import io.lettuce.core.RedisClient;
import java.nio.file.Path;
import java.time.Duration;
import java.util.ArrayList;
import java.util.List;
import org.junit.jupiter.api.Test;

/**
 * The example of {@link RedlockBackends}' class javadoc, run against three masters; the javadoc holds a
 * copy of the region marked below, and {@link #javadocHoldsTheseExamples()} checks it is the same.
 */
class RedlockBackendsExamplesTest {
    private final List<Long> reports = new ArrayList<>();
    private String redlockUri;

    @Test
    void javadocHoldsTheseExamples() {
        assertThat(JavadocExamples.check(
                        Path.of("src/main/java/dev/dlock/redis/RedlockBackends.java"),
                        Path.of("src/test/java/dev/dlock/redis/RedlockBackendsExamplesTest.java")))
                .containsExactly("redlock-clients");
    }

    @Test
    void clientsOfTheApplicationOnePerMaster() {
        try (RedlockServers servers = new RedlockServers(3)) {
            redlockUri = servers.uri();
            servers.all().forEach(server -> server.markFresh("dlock"));
            List<String> masterUris =
                    servers.all().stream().map(RedisServer::plainUri).toList();
            // example: redlock-clients
            List<RedisClient> masters =
                    masterUris.stream().map(RedisClient::create).toList();
            LockBackendFactory backend = RedlockBackends.builder(masters.toArray(RedisClient[]::new))
                    .masterTimeout(Duration.ofMillis(500))
                    .build();
            try (LockClient locks = LockClient.builder(backend).build()) {
                try (Lease lease = locks.lock("report").acquire(Duration.ofSeconds(5))) {
                    writeReport(lease.fencingToken());
                }
            }
            masters.forEach(RedisClient::shutdown);
            // end example
            assertThat(reports).hasSize(1).allSatisfy(token -> assertThat(token).isPositive());
            try (LockClient other = LockClient.connect(redlockUri)) {
                assertThat(other.lock("report").tryAcquire()).as("released").isPresent();
            }
        }
    }

    private void writeReport(long fencingToken) {
        try (LockClient other = LockClient.connect(redlockUri)) {
            assertThat(other.lock("report").tryAcquire())
                    .as("held by the example")
                    .isEmpty();
        }
        reports.add(fencingToken);
    }
}
