package dev.dlock.cli;

import static org.assertj.core.api.Assertions.assertThat;

import dev.dlock.testsupport.RedisProcess;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.ArrayList;
import java.util.List;
import org.junit.jupiter.api.AfterEach;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;

/** {@code dlock run} and {@code dlock status} on Redlock over 3 {@code redis-server} processes. */
class RedlockRunTest {
    @TempDir
    Path dir;

    private final List<RedisProcess> servers = new ArrayList<>();

    @AfterEach
    void stopServers() throws Exception {
        for (RedisProcess server : servers) {
            server.close();
        }
    }

    private int startServer() throws Exception {
        RedisProcess server = RedisProcess.start();
        servers.add(server);
        return server.port();
    }

    @Test
    void runAcceptsARedlockUri() throws Exception {
        // Fresh masters: without the opt-out they hold their first grant back for maxLease (30 s).
        String backend = "redlock://127.0.0.1:" + startServer() + ",127.0.0.1:" + startServer() + ",127.0.0.1:"
                + startServer() + "?unsafeGrantAfterRestart=true";
        Path out = dir.resolve("token.txt");
        TestEnvironment env = new TestEnvironment(dir);
        int code = env.parse("run", "--backend", backend, "job", "--", "sh", "-c", "echo $DLOCK_FENCING_TOKEN > " + out)
                .execute();
        assertThat(code).as(env.err()).isZero();
        assertThat(Long.parseLong(Files.readString(out).strip())).isPositive();
        TestEnvironment status = new TestEnvironment(dir);
        assertThat(status.parse("status", "--backend", backend, "job").execute())
                .isEqualTo(ExitCodes.BUSY);
        assertThat(status.out()).contains("job: free");
    }
}
