package dev.dlock.testsupport;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;

import java.io.IOException;
import java.io.InputStream;
import java.io.OutputStream;
import java.net.InetSocketAddress;
import java.net.Socket;
import java.nio.charset.StandardCharsets;
import java.nio.file.Files;
import java.nio.file.Path;
import java.time.Duration;
import java.util.List;
import java.util.concurrent.atomic.AtomicInteger;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;

/** {@link RedisProcess}: start, kill, restart with and without its files, freeze, Sentinel, a taken port. */
class RedisProcessTest {
    @TempDir
    Path parent;

    @Test
    void aRestartKeepsThePortAndTheFilesAnEmptyRestartDropsTheData() throws Exception {
        try (RedisProcess redis = RedisProcess.start("--appendonly", "yes", "--appendfsync", "always")) {
            int port = redis.port();
            assertThat(command(redis, "SET", "k", "v")).isEqualTo("+OK");

            redis.kill();
            assertThat(redis.isRunning()).isFalse();
            redis.restart();
            assertThat(redis.port()).isEqualTo(port);
            assertThat(command(redis, "GET", "k")).isEqualTo("$1 v");

            redis.restartEmpty();
            assertThat(command(redis, "GET", "k")).isEqualTo("$-1");
        }
    }

    @Test
    void aFrozenServerAnswersNothingUntilThawed() throws Exception {
        try (RedisProcess redis = RedisProcess.start()) {
            redis.freeze();
            assertThatThrownBy(() -> command(redis, "PING")).isInstanceOf(IOException.class);
            assertThat(redis.isRunning()).isTrue();
            redis.thaw();
            assertThat(command(redis, "PING")).isEqualTo("+PONG");
        }
    }

    @Test
    void closeKillsTheProcessAndDeletesItsTemporaryDirectoryButNotAGivenOne() throws Exception {
        RedisProcess temporary = RedisProcess.start();
        temporary.close();
        assertThat(temporary.isRunning()).isFalse();
        assertThat(temporary.dir()).doesNotExist();

        RedisProcess placed = RedisProcess.startOn("127.0.0.1", parent, "--requirepass", "secret");
        assertThat(placed.dir()).isEqualTo(parent.resolve("redis-" + placed.port()));
        assertThat(command(placed, "PING")).startsWith("-NOAUTH");
        placed.close();
        assertThat(placed.isRunning()).isFalse();
        assertThat(placed.dir().resolve("redis.log")).exists();
    }

    @Test
    void aSentinelWatchesItsMaster() throws Exception {
        try (RedisProcess master = RedisProcess.start();
                RedisProcess sentinel =
                        RedisProcess.sentinel("127.0.0.1", null, master.port(), "m", Duration.ofSeconds(5))) {
            assertThat(command(sentinel, "SENTINEL", "GET-MASTER-ADDR-BY-NAME", "m"))
                    .isEqualTo("*2 $9 127.0.0.1 $"
                            + Integer.toString(master.port()).length() + " " + master.port());
        }
    }

    @Test
    void aPortTakenBeforeTheServerBindsItIsReplacedByAFreshOne() throws Exception {
        // taken by another server that answers PING too: only the new server's own log tells them apart
        try (RedisProcess other = RedisProcess.start()) {
            int fresh = FreePorts.nextPair(10_000);
            AtomicInteger asked = new AtomicInteger();
            try (RedisProcess redis = RedisProcess.started(
                    "127.0.0.1",
                    null,
                    "redis-",
                    List.of("--bind", "127.0.0.1", "--save", "", "--logfile", "redis.log"),
                    false,
                    () -> asked.getAndIncrement() == 0 ? other.port() : fresh)) {
                assertThat(redis.port()).isEqualTo(fresh);
                assertThat(redis.isRunning()).isTrue();
                assertThat(command(redis, "PING")).isEqualTo("+PONG");
            }

            assertThatThrownBy(() -> RedisProcess.started(
                            "127.0.0.1",
                            null,
                            "redis-",
                            List.of("--bind", "127.0.0.1", "--logfile", "redis.log"),
                            false,
                            other::port))
                    .isInstanceOf(IllegalStateException.class)
                    .hasMessageContaining("Address already in use");
            assertThat(command(other, "PING")).isEqualTo("+PONG");
        }
    }

    @Test
    void theDataDirectoryHoldsTheConfigurationAndTheLog() throws Exception {
        try (RedisProcess redis = RedisProcess.start()) {
            assertThat(Files.readString(redis.dir().resolve("redis.conf"))).contains("port " + redis.port());
            assertThat(redis.log()).contains("Ready to accept connections");
            assertThat(redis.uri()).isEqualTo("redis://127.0.0.1:" + redis.port());
        }
    }

    /** One command in RESP; the reply's lines joined by spaces (a bulk string as its length and text). */
    private static String command(RedisProcess redis, String... words) throws IOException {
        try (Socket socket = new Socket()) {
            socket.connect(new InetSocketAddress(redis.host(), redis.port()), 500);
            socket.setSoTimeout(500);
            StringBuilder request = new StringBuilder("*" + words.length + "\r\n");
            for (String word : words) {
                request.append('$')
                        .append(word.length())
                        .append("\r\n")
                        .append(word)
                        .append("\r\n");
            }
            OutputStream out = socket.getOutputStream();
            out.write(request.toString().getBytes(StandardCharsets.UTF_8));
            out.flush();
            InputStream in = socket.getInputStream();
            byte[] buffer = new byte[4096];
            int read = in.read(buffer);
            if (read < 0) {
                throw new IOException("closed");
            }
            String reply = new String(buffer, 0, read, StandardCharsets.UTF_8);
            return String.join(" ", reply.strip().split("\r\n"));
        }
    }
}
