package dev.dlock.cli;

import static org.assertj.core.api.Assertions.assertThat;

import dev.dlock.testsupport.RedisProcess;
import java.nio.file.Files;
import java.nio.file.Path;
import java.time.Duration;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.TimeUnit;
import org.junit.jupiter.api.AfterEach;
import org.junit.jupiter.api.BeforeEach;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;

/**
 * {@code dlock run} against a {@code redis-server} that wants a password, and one that hangs; {@code status}
 * and {@code release} while a fresh one holds grants back.
 */
class RedisStoreTest {
    private static final String PASSWORD = "s3cret-Pa55";

    @TempDir
    Path dir;

    RedisProcess server;

    @BeforeEach
    void startServer() throws Exception {
        server = RedisProcess.start("--requirepass", PASSWORD);
    }

    @AfterEach
    void stopServer() throws Exception {
        server.close();
    }

    private String uri(String userInfo) {
        // A fresh server holds its first grants back for 30 s by default (it cannot be told from one that
        // lost its state); these cases are about credentials and a hung server, so they opt out.
        return "redis://" + userInfo + "127.0.0.1:" + server.port() + "?unsafeGrantAfterRestart=true";
    }

    /**
     * A fresh server holds grants back (it cannot be told from one that lost its state): {@code status}
     * says so and exits 1 (nobody holds the name), and {@code release --force} finds nothing to release.
     */
    @Test
    void statusShowsThatTheStoreHoldsGrantsBack() {
        String uri = "redis://:" + PASSWORD + "@127.0.0.1:" + server.port() + "?maxLease=20s";
        TestEnvironment status = new TestEnvironment(dir);
        int code = status.parse("status", "--backend", uri, "job").execute();

        assertThat(code).as(status.err()).isEqualTo(ExitCodes.BUSY);
        assertThat(status.out())
                .contains("job: free")
                .contains("grants held back for ")
                .contains("the store may have lost holds whose leases are still running");

        TestEnvironment release = new TestEnvironment(dir);
        assertThat(release.parse("release", "--force", "--yes", "--backend", uri, "job")
                        .execute())
                .isEqualTo(ExitCodes.BUSY);
        assertThat(release.err()).contains("'job' is not held");
    }

    @Test
    void aWrongPasswordIsReportedAsAnAuthenticationFailure() {
        TestEnvironment env = new TestEnvironment(dir);
        int code = env.parse("run", "--backend", uri(":wrong-Pa55@"), "job", "--", "true")
                .execute();

        assertThat(code).isEqualTo(ExitCodes.UNAVAILABLE);
        assertThat(env.err())
                .contains("dlock: the lock store refused the credentials: WRONGPASS")
                .contains("Check the user and password in the backend URI")
                .contains("127.0.0.1:" + server.port())
                .doesNotContain("wrong-Pa55");
    }

    @Test
    void aMissingPasswordIsReportedAsAnAuthenticationFailure() {
        TestEnvironment env = new TestEnvironment(dir);
        int code = env.parse("run", "--backend", uri(""), "job", "--", "true").execute();

        assertThat(code).isEqualTo(ExitCodes.UNAVAILABLE);
        assertThat(env.err())
                .contains("dlock: the lock store refused the credentials")
                .contains("NOAUTH");
    }

    @Test
    void aHungStoreEndsTheRunWithExit75WhenTheLeaseRunsOut() throws Exception {
        Path marker = dir.resolve("started");
        TestEnvironment env = new TestEnvironment(dir);
        CompletableFuture<Integer> result = CompletableFuture.supplyAsync(() -> env.parse(
                        "run",
                        "--lease",
                        "2s",
                        "--backend",
                        uri(":" + PASSWORD + "@"),
                        "job",
                        "--",
                        "sh",
                        "-c",
                        "touch " + marker + "; exec sleep 60")
                .execute());
        long deadline = System.nanoTime() + TimeUnit.SECONDS.toNanos(30);
        while (!Files.exists(marker)) {
            assertThat(System.nanoTime() - deadline).as(env.err()).isNegative();
            Thread.sleep(20);
        }
        server.freeze();
        long paused = System.nanoTime();

        assertThat(result.get(30, TimeUnit.SECONDS)).as(env.err()).isEqualTo(ExitCodes.LEASE_LOST);
        Duration took = Duration.ofNanos(System.nanoTime() - paused);
        // The lease ends at most one lease time after the pause; nothing may wait for the hung store after that
        // (a release would wait one operation timeout, 5 s by default).
        assertThat(took).as(env.err()).isLessThan(Duration.ofMillis(2_000 + 2_500));
        assertThat(env.err()).contains("dlock: lost the lock 'job'");
    }
}
