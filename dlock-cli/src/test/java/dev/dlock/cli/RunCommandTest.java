package dev.dlock.cli;

import static org.assertj.core.api.Assertions.assertThat;

import dev.dlock.Lease;
import dev.dlock.LockClient;
import dev.dlock.testsupport.FreePorts;
import java.nio.charset.StandardCharsets;
import java.nio.file.Files;
import java.nio.file.Path;
import java.time.Duration;
import java.util.List;
import java.util.Optional;
import java.util.UUID;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.TimeUnit;
import org.junit.jupiter.api.AfterEach;
import org.junit.jupiter.api.BeforeEach;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;

/**
 * {@code run}, {@code status}, {@code ls} and {@code release} executed in this JVM against the in-memory
 * store ({@code mem:NAME} is shared by every client of one JVM), with real child processes for CMD.
 */
class RunCommandTest {
    @TempDir
    Path dir;

    TestEnvironment env;
    String backend;
    LockClient other;

    @BeforeEach
    void setUp() {
        env = new TestEnvironment(dir);
        backend = "mem:run-" + UUID.randomUUID();
        other = LockClient.connect(backend);
    }

    @AfterEach
    void tearDown() {
        other.close();
    }

    private int run(String... args) {
        return env.parse(args).execute();
    }

    private static boolean eventually(java.util.function.BooleanSupplier condition) throws InterruptedException {
        long deadline = System.nanoTime() + TimeUnit.SECONDS.toNanos(10);
        while (System.nanoTime() < deadline) {
            if (condition.getAsBoolean()) {
                return true;
            }
            Thread.sleep(20);
        }
        return false;
    }

    @Test
    void exitsWithTheCommandsCodeAndReleases() {
        assertThat(run("run", "--backend", backend, "job", "--", "sh", "-c", "exit 7"))
                .isEqualTo(7);
        assertThat(run("run", "--backend", backend, "job", "--", "true")).isZero();
        Optional<Lease> free = other.lock("job").tryAcquire();
        assertThat(free).as("released after the command").isPresent();
        free.get().close();
    }

    @Test
    void minHoldKeepsTheLockUntilItsTimeAfterAShortCommand() throws Exception {
        Path ran = dir.resolve("ran-min-hold");
        long start = System.nanoTime();
        CompletableFuture<Integer> code = CompletableFuture.supplyAsync(
                () -> run("run", "--backend", backend, "--min-hold", "1500ms", "job", "--", "touch", ran.toString()));
        assertThat(eventually(() -> Files.exists(ran))).as("the command ran").isTrue();
        assertThat(other.lock("job").tryAcquire())
                .as("held after the command ended")
                .isEmpty();
        assertThat(code.get(10, TimeUnit.SECONDS)).isZero();
        assertThat(TimeUnit.NANOSECONDS.toMillis(System.nanoTime() - start)).isGreaterThanOrEqualTo(1_500);
        Optional<Lease> free = other.lock("job").tryAcquire();
        assertThat(free).as("released once the minimum hold was up").isPresent();
        free.get().close();
    }

    @Test
    void commandSeesNameAndFencingToken() throws Exception {
        Path out = dir.resolve("env.txt");
        int code = run(
                "run",
                "--backend",
                backend,
                "report:daily",
                "--",
                "sh",
                "-c",
                "printf '%s %s' \"$DLOCK_NAME\" \"$DLOCK_FENCING_TOKEN\" > " + out);
        assertThat(code).isZero();
        String[] seen = Files.readString(out, StandardCharsets.UTF_8).split(" ");
        assertThat(seen[0]).isEqualTo("report:daily");
        long token = Long.parseLong(seen[1]);
        try (Lease next = other.lock("report:daily").acquire(Duration.ofSeconds(5))) {
            assertThat(next.fencingToken()).isGreaterThan(token);
        }
    }

    @Test
    void aNameStartingWithADashGoesAfterADoubleDash() throws Exception {
        Path out = dir.resolve("name.txt");
        int code = run(
                "run",
                "--backend",
                backend,
                "--wait",
                "5s",
                "--",
                "-job",
                "--",
                "sh",
                "-c",
                "printf '%s' \"$DLOCK_NAME\" > " + out);
        assertThat(code).as(env.err()).isZero();
        assertThat(Files.readString(out, StandardCharsets.UTF_8)).isEqualTo("-job");

        TestEnvironment busy = new TestEnvironment(dir);
        try (Lease held = other.lock("-job").acquire(Duration.ofSeconds(5))) {
            assertThat(busy.parse("run", "--backend", backend, "-n", "--", "-job", "--", "true")
                            .execute())
                    .isEqualTo(ExitCodes.BUSY);
        }
        assertThat(busy.err()).contains("'-job' is busy");
    }

    @Test
    void nonblockExitsOneWhenBusy() {
        try (Lease held = other.lock("job").acquire(Duration.ofSeconds(5))) {
            long started = System.nanoTime();
            assertThat(run(
                            "run",
                            "-n",
                            "--backend",
                            backend,
                            "job",
                            "--",
                            "touch",
                            dir.resolve("ran").toString()))
                    .isEqualTo(ExitCodes.BUSY);
            assertThat(Duration.ofNanos(System.nanoTime() - started)).isLessThan(Duration.ofSeconds(5));
            assertThat(dir.resolve("ran")).doesNotExist();
            assertThat(env.err())
                    .contains(
                            "'job' is busy, held by " + ProcessHandle.current().pid() + "@")
                    .contains("(token " + held.fencingToken() + ")");
        }
    }

    @Test
    void waitTimesOutWithMessage() {
        try (Lease held = other.lock("job").acquire(Duration.ofSeconds(5))) {
            long started = System.nanoTime();
            assertThat(run("run", "--wait", "300ms", "--backend", backend, "job", "--", "true"))
                    .isEqualTo(ExitCodes.BUSY);
            assertThat(Duration.ofNanos(System.nanoTime() - started)).isGreaterThanOrEqualTo(Duration.ofMillis(300));
            assertThat(env.err()).contains("timed out after 300ms waiting for 'job', held by");
            assertThat(held.isValid()).isTrue();
        }
    }

    @Test
    void waitsForTheHolderThenRuns() throws Exception {
        Lease held = other.lock("job").acquire(Duration.ofSeconds(5));
        Path marker = dir.resolve("ran");
        CompletableFuture<Integer> result = CompletableFuture.supplyAsync(
                () -> run("run", "--wait", "10s", "--backend", backend, "job", "--", "touch", marker.toString()));
        Thread.sleep(500);
        assertThat(marker).as("must not run while the lock is held").doesNotExist();
        held.close();
        assertThat(result.get(10, TimeUnit.SECONDS)).isZero();
        assertThat(marker).exists();
    }

    @Test
    void liveStatusLineOnATerminal() {
        env.interactive = true;
        try (Lease held = other.lock("job").acquire(Duration.ofSeconds(5))) {
            assertThat(run("run", "--wait", "1200ms", "--backend", backend, "job", "--", "true"))
                    .isEqualTo(ExitCodes.BUSY);
            assertThat(env.err())
                    .contains("\rdlock: waiting for 'job', held by "
                            + ProcessHandle.current().pid() + "@")
                    .contains("(token " + held.fencingToken() + "), waited ")
                    .contains("\r\033[K");
        }
    }

    @Test
    void noStatusLineWithoutTerminal() {
        try (Lease held = other.lock("job").acquire(Duration.ofSeconds(5))) {
            assertThat(run("run", "--wait", "600ms", "--backend", backend, "job", "--", "true"))
                    .isEqualTo(ExitCodes.BUSY);
            assertThat(env.err()).doesNotContain("\r").doesNotContain("waited");
        }
    }

    @Test
    void lostLeaseStopsTheCommandWithSigterm() throws Exception {
        Path marker = dir.resolve("started");
        CompletableFuture<Integer> result = CompletableFuture.supplyAsync(() -> run(
                "run",
                "--lease",
                "300ms",
                "--backend",
                backend,
                "job",
                "--",
                "sh",
                "-c",
                "touch " + marker + "; exec sleep 60"));
        assertThat(eventually(() -> Files.exists(marker))).isTrue();
        long started = System.nanoTime();
        assertThat(other.forceRelease("job")).isTrue();
        assertThat(result.get(10, TimeUnit.SECONDS)).isEqualTo(ExitCodes.LEASE_LOST);
        assertThat(Duration.ofNanos(System.nanoTime() - started)).isLessThan(Duration.ofSeconds(5));
        assertThat(env.err()).contains("dlock: lost the lock 'job'").contains("stopping sh (SIGTERM");
        assertThat(sleepers(marker)).isEmpty();
    }

    @Test
    void commandIgnoringSigtermGetsSigkillAfterGrace() throws Exception {
        Path marker = dir.resolve("started");
        CompletableFuture<Integer> result = CompletableFuture.supplyAsync(() -> run(
                "run",
                "--lease",
                "300ms",
                "--grace",
                "1s",
                "--backend",
                backend,
                "job",
                "--",
                "sh",
                "-c",
                "trap '' TERM; touch " + marker + "; sleep 60; echo survived"));
        assertThat(eventually(() -> Files.exists(marker))).isTrue();
        long started = System.nanoTime();
        other.forceRelease("job");
        assertThat(result.get(15, TimeUnit.SECONDS)).isEqualTo(ExitCodes.LEASE_LOST);
        Duration took = Duration.ofNanos(System.nanoTime() - started);
        assertThat(took).isGreaterThanOrEqualTo(Duration.ofSeconds(1)).isLessThan(Duration.ofSeconds(8));
        assertThat(eventually(() -> sleepers(marker).isEmpty()))
                .as("the command's children get SIGKILL too")
                .isTrue();
    }

    /** Processes still running the test's command line (found by the unique marker path). */
    private static List<ProcessHandle> sleepers(Path marker) {
        return ProcessHandle.allProcesses()
                .filter(p -> p.info().commandLine().orElse("").contains(marker.toString()))
                .toList();
    }

    @Test
    void missingCommandIs127AndReleases() {
        assertThat(run("run", "--backend", backend, "job", "--", "/no/such/command-" + UUID.randomUUID()))
                .isEqualTo(ExitCodes.NOT_FOUND);
        assertThat(env.err()).contains("dlock: cannot run /no/such/command-");
        assertThat(other.describe("job")).isEmpty();
    }

    @Test
    void unreachableStoreExits69() throws Exception {
        int closedPort = FreePorts.next(); // nothing listens there
        long started = System.nanoTime();
        assertThat(run(
                        "run",
                        "--backend",
                        "redis://127.0.0.1:" + closedPort,
                        "job",
                        "--",
                        "touch",
                        dir.resolve("ran").toString()))
                .isEqualTo(ExitCodes.UNAVAILABLE);
        assertThat(Duration.ofNanos(System.nanoTime() - started)).isLessThan(Duration.ofSeconds(30));
        assertThat(env.err()).contains("dlock: the lock store failed");
        assertThat(dir.resolve("ran")).doesNotExist();
    }

    @Test
    void unknownBackendIsAUsageError() {
        assertThat(run("run", "--backend", "nosuch://host", "job", "--", "true"))
                .isEqualTo(ExitCodes.USAGE);
        assertThat(env.err()).contains("scheme 'nosuch:'");
    }

    @Test
    void statusShowsTheHolder() {
        assertThat(run("status", "--backend", backend, "job")).isEqualTo(ExitCodes.BUSY);
        assertThat(env.out()).contains("job: free");
        try (Lease held = other.lock("job").acquire(Duration.ofSeconds(5))) {
            env = new TestEnvironment(dir);
            assertThat(run("status", "--backend", backend, "job")).isZero();
            assertThat(env.out())
                    .contains("job: lock")
                    .contains("holder " + ProcessHandle.current().pid() + "@")
                    .contains("token " + held.fencingToken())
                    .contains("mode exclusive")
                    .contains("expires in");
        }
    }

    @Test
    void lsListsHeldLocksByPrefix() {
        try (Lease a = other.lock("billing:1").acquire(Duration.ofSeconds(5));
                Lease b = other.lock("billing:2").acquire(Duration.ofSeconds(5));
                Lease c = other.lock("reports").acquire(Duration.ofSeconds(5))) {
            assertThat(run("ls", "--backend", backend, "billing:")).isZero();
            List<String> lines = env.out().lines().toList();
            assertThat(lines.get(0)).contains("NAME", "KIND", "HOLDER", "TOKEN", "EXPIRES", "WAITERS");
            assertThat(lines).hasSize(3);
            assertThat(lines.get(1)).startsWith("billing:1").contains(Long.toString(a.fencingToken()));
            assertThat(lines.get(2)).startsWith("billing:2").contains(Long.toString(b.fencingToken()));
            env = new TestEnvironment(dir);
            assertThat(run("ls", "--backend", backend)).isZero();
            assertThat(env.out().lines()).hasSize(4).anyMatch(line -> line.startsWith("reports"));
            assertThat(c.isValid()).isTrue();
        }
        env = new TestEnvironment(dir);
        assertThat(run("ls", "--backend", backend)).isZero();
        assertThat(env.out()).contains("no locks held");
    }

    @Test
    void releaseAsksUnlessYes() throws Exception {
        // Renewed every second, so the holder learns of the force-release within a second; long enough that
        // a stall of the loaded test lanes does not let the store expire it while the prompt is answered.
        LockClient shortLeases =
                LockClient.builder(backend).leaseTime(Duration.ofSeconds(3)).build();
        Lease held = shortLeases.lock("job").acquire(Duration.ofSeconds(5));
        env.input = "n\n";
        assertThat(run("release", "--force", "--backend", backend, "job")).isEqualTo(ExitCodes.BUSY);
        assertThat(env.err())
                .contains("Force-release 'job' held by")
                .contains("[y/N]")
                .contains("not released");
        assertThat(other.describe("job")).isNotEmpty();

        env = new TestEnvironment(dir);
        env.input = "y\n";
        assertThat(run("release", "--force", "--backend", backend, "job")).isZero();
        assertThat(env.out()).contains("released 'job'");
        assertThat(other.describe("job")).isEmpty();
        assertThat(held.whenLost().get(5, TimeUnit.SECONDS)).isNotNull();
        shortLeases.close();

        try (Lease again = other.lock("job").acquire(Duration.ofSeconds(5))) {
            env = new TestEnvironment(dir);
            assertThat(run("release", "--force", "--yes", "--backend", backend, "job"))
                    .isZero();
            assertThat(env.err()).doesNotContain("[y/N]");
            assertThat(other.describe("job")).isEmpty();
            assertThat(again.fencingToken()).isGreaterThan(held.fencingToken());
        }
        env = new TestEnvironment(dir);
        assertThat(run("release", "--force", "--yes", "--backend", backend, "job"))
                .isEqualTo(ExitCodes.BUSY);
        assertThat(env.err()).contains("'job' is not held");
    }
}
