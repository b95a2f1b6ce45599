package dev.dlock.cli;

import static org.assertj.core.api.Assertions.assertThat;

import dev.dlock.Lease;
import dev.dlock.LockClient;
import dev.dlock.testsupport.FreePorts;
import dev.dlock.testsupport.RedisProcess;
import java.net.URI;
import java.net.http.HttpClient;
import java.net.http.HttpRequest;
import java.net.http.HttpResponse;
import java.nio.file.Files;
import java.nio.file.Path;
import java.sql.Connection;
import java.sql.DriverManager;
import java.sql.Statement;
import java.time.Duration;
import java.util.ArrayList;
import java.util.List;
import java.util.regex.Matcher;
import java.util.regex.Pattern;
import org.junit.jupiter.api.AfterEach;
import org.junit.jupiter.api.BeforeEach;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;

/**
 * A password in a store URI never shows: on every store this test can start cheaply (Redis with
 * {@code requirepass}, the local ZooKeeper server with digest authentication, PostgreSQL with a {@code
 * password=} parameter), with a sentinel password, every output is scanned: what {@code run}, {@code
 * status}, {@code ls}, {@code release} and {@code console} print (stdout and stderr, including log lines),
 * the console's page and JSON, {@code toString()} of clients and leases, and the messages of a wrong
 * password, an unreachable store and an unknown scheme.
 */
class SecretsTest {
    private static final String SENTINEL = "Sentinel-Pw-4711";
    private static final String WRONG = "Wrong-Sentinel-0815";

    @TempDir
    Path dir;

    CliProcesses cli;
    final List<String> seen = new ArrayList<>();

    @BeforeEach
    void setUp() throws Exception {
        cli = new CliProcesses(dir);
    }

    @AfterEach
    void tearDown() {
        cli.close();
    }

    private void assertNothingShows() {
        for (String text : seen) {
            assertThat(text).doesNotContain(SENTINEL).doesNotContain(WRONG);
        }
    }

    private CliProcesses.Result cli(String... args) throws Exception {
        CliProcesses.Result result = cli.run(args);
        seen.add(result.out());
        seen.add(result.err());
        return result;
    }

    /** Every command on a store with the sentinel password, with a lock held by another process. */
    private void everyCommand(String uri, String lockName) throws Exception {
        Path marker = dir.resolve(lockName.replace(':', '_') + ".held");
        // A short lease: the holder learns of the forced release below at its next renewal (a third of it).
        CliProcesses.Running holder = cli.start(
                "run",
                "--backend",
                uri,
                "--lease",
                "5s",
                lockName,
                "--",
                "sh",
                "-c",
                "touch " + marker + "; exec sleep 120");
        long deadline = System.nanoTime() + Duration.ofSeconds(60).toNanos();
        while (!Files.exists(marker)) {
            assertThat(holder.process.isAlive()).as(holder.err()).isTrue();
            assertThat(System.nanoTime()).as("holder took the lock").isLessThan(deadline);
            Thread.sleep(50);
        }
        assertThat(cli("status", "--backend", uri, lockName).code()).isZero();
        assertThat(cli("ls", "--backend", uri).out()).contains(lockName);

        CliProcesses.Running console = cli.start("console", "--backend", uri, "--port", "0", "--interval", "200ms");
        Matcher url = Pattern.compile("http://127\\.0\\.0\\.1:\\d+/").matcher("");
        while (!url.reset(console.out()).find()) {
            assertThat(console.process.isAlive()).as(console.err()).isTrue();
            assertThat(System.nanoTime()).as("console started").isLessThan(deadline);
            Thread.sleep(100);
        }
        HttpClient http = HttpClient.newHttpClient();
        for (String path : List.of("", "api/locks", "api/events", "console.js")) {
            HttpResponse<String> page = http.send(
                    HttpRequest.newBuilder(URI.create(url.group() + path)).build(),
                    HttpResponse.BodyHandlers.ofString());
            seen.add(page.body());
        }
        assertThat(seen.get(seen.size() - 3)).as("the console sees the lock").contains(lockName);
        assertThat(cli("release", "--backend", uri, "--force", "--yes", lockName)
                        .code())
                .isZero();
        assertThat(holder.await(60).code()).as("the holder lost its lease").isEqualTo(75);
        seen.add(holder.out());
        seen.add(holder.err());
        console.process.destroy();
        console.process.waitFor();
        seen.add(console.out());
        seen.add(console.err());

        try (LockClient client = LockClient.connect(uri);
                Lease lease = client.lock(lockName + ":in-process").acquire()) {
            seen.add(client.toString());
            seen.add(lease.toString());
            seen.add(String.valueOf(client.describe(lockName + ":in-process")));
        }
        assertNothingShows();
    }

    @Test
    void redisPassword() throws Exception {
        try (RedisProcess redis = RedisProcess.start("--requirepass", SENTINEL)) {
            // A fresh server: without the opt-out its first grant is held back for the default max lease (30 s).
            everyCommand(
                    "redis://:" + SENTINEL + "@127.0.0.1:" + redis.port() + "?unsafeGrantAfterRestart=true",
                    "secret:redis");
            CliProcesses.Result wrong =
                    cli("status", "--backend", "redis://:" + WRONG + "@127.0.0.1:" + redis.port(), "x");
            assertThat(wrong.code()).isEqualTo(69);
            assertThat(wrong.err()).contains("redis://");
        }
        CliProcesses.Result down = cli("ls", "--backend", "redis://:" + SENTINEL + "@127.0.0.1:" + FreePorts.next());
        assertThat(down.code()).isEqualTo(69);
        CliProcesses.Result unknown = cli("ls", "--backend", "nosuch://admin:" + SENTINEL + "@host/?password=" + WRONG);
        assertThat(unknown.code()).isEqualTo(2);
        assertThat(unknown.err()).contains("nosuch:");
        assertNothingShows();
    }

    @Test
    void zooKeeperDigestSecret() throws Exception {
        CliProcesses.Result started = cli("server", "start");
        assertThat(started.code()).as(started.err()).isZero();
        Matcher address = Pattern.compile("zookeeper://(127\\.0\\.0\\.1:\\d+)")
                .matcher(cli("server", "status").out());
        assertThat(address.find()).isTrue();
        everyCommand("zookeeper://dlock:" + SENTINEL + "@" + address.group(1) + "/?sessionTimeout=5s", "secret:zk");
        assertThat(cli("server", "stop").code()).isZero();
    }

    @Test
    void postgresPasswordParameter() throws Exception {
        String prefix = "sec" + Long.toHexString(System.nanoTime()) + "_";
        String uri = "jdbc:postgresql://127.0.0.1:5432/test?user=postgres&password=" + SENTINEL + "&dlock.tablePrefix="
                + prefix + "&dlock.createTables=true";
        try {
            everyCommand(uri, "secret:pg");
        } finally {
            try (Connection db = DriverManager.getConnection("jdbc:postgresql://127.0.0.1:5432/test?user=postgres");
                    Statement st = db.createStatement()) {
                st.execute("DROP TABLE IF EXISTS " + prefix + "locks");
                st.execute("DROP TABLE IF EXISTS " + prefix + "entries");
            }
        }
    }
}
