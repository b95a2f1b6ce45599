package dev.dlock.redis;

import static org.assertj.core.api.Assertions.assertThat;

import dev.dlock.Lease;
import dev.dlock.LockClient;
import dev.dlock.spi.LockBackendFactory;
import dev.dlock.spi.LockKey;
import dev.dlock.spi.Mode;
import dev.dlock.tck.JavadocExamples;
import io.lettuce.core.RedisClient;
import java.nio.file.Path;
import java.time.Duration;
import java.util.ArrayList;
import java.util.List;
import org.junit.jupiter.api.Test;

/**
 * The example of {@link RedisBackends}' class javadoc, run against a master with one replica; the javadoc
 * holds a copy of the region marked below, and {@link #javadocHoldsTheseExamples()} checks it is the same.
 */
class RedisBackendsExamplesTest {
    private final List<Long> reports = new ArrayList<>();
    private RedisServer replica;

    @Test
    void javadocHoldsTheseExamples() {
        assertThat(JavadocExamples.check(
                        Path.of("src/main/java/dev/dlock/redis/RedisBackends.java"),
                        Path.of("src/test/java/dev/dlock/redis/RedisBackendsExamplesTest.java")))
                .containsExactly("redis-client");
    }

    @Test
    void clientOfTheApplicationWithReplicaAcknowledgements() {
        try (RedisServer master = RedisServer.start();
                RedisServer replica = RedisServer.start("--replicaof", "127.0.0.1", Integer.toString(master.port()))) {
            RedisSentinelServers.await("the replica did not sync", () -> ((String) replica.call("INFO", "replication"))
                    .contains("master_link_status:up"));
            this.replica = replica;
            master.markFresh("dlock");
            String redisUri = master.plainUri();
            // example: redis-client
            RedisClient redis = RedisClient.create(redisUri);
            LockBackendFactory backend = RedisBackends.builder(redis)
                    .replicaAcks(1, Duration.ofMillis(500))
                    .build();
            try (LockClient locks = LockClient.builder(backend).build()) {
                try (Lease lease = locks.lock("report").acquire(Duration.ofSeconds(5))) {
                    writeReport(lease.fencingToken());
                }
            }
            redis.shutdown();
            // end example
            assertThat(reports).hasSize(1).allSatisfy(token -> assertThat(token).isPositive());
            assertThat(master.call("EXISTS", holders())).as("released").isEqualTo(0L);
        }
    }

    private void writeReport(long fencingToken) {
        assertThat(replica.call("EXISTS", holders()))
                .as("the replica acknowledged the grant before acquire returned")
                .isEqualTo(1L);
        reports.add(fencingToken);
    }

    private static String holders() {
        return ResourceKeys.of(new LockKey("dlock", "report", Mode.EXCLUSIVE)).holders();
    }
}
