package dev.dlock.cli;

import static org.assertj.core.api.Assertions.assertThat;

import dev.dlock.Lease;
import dev.dlock.LockClient;
import dev.dlock.testsupport.EtcdServers;
import java.nio.charset.StandardCharsets;
import java.nio.file.Files;
import java.nio.file.Path;
import java.time.Duration;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;

/** The CLI takes {@code etcd://} backends: {@code run} on a real etcd process. */
class EtcdCliTest {
    @TempDir
    Path dir;

    @Test
    void runHoldsTheLockOnEtcdAndPassesItsToken() throws Exception {
        try (EtcdServers etcd = EtcdServers.single()) {
            String backend = "etcd://" + etcd.hosts() + "/cli";
            TestEnvironment env = new TestEnvironment(dir);
            Path out = dir.resolve("token.txt");
            int code = env.parse(
                            "run",
                            "--backend",
                            backend,
                            "nightly",
                            "--",
                            "sh",
                            "-c",
                            "printf '%s' \"$DLOCK_FENCING_TOKEN\" > " + out)
                    .execute();
            assertThat(code).as(env.err()).isZero();
            long token = Long.parseLong(Files.readString(out, StandardCharsets.UTF_8));
            try (LockClient other = LockClient.connect(backend);
                    Lease next = other.lock("nightly").acquire(Duration.ofSeconds(5))) {
                assertThat(next.fencingToken())
                        .as("released, and tokens increase")
                        .isGreaterThan(token);
            }
        }
    }
}
