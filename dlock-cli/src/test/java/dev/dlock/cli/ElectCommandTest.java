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
 * {@code dlock elect} executed in this JVM against the in-memory store ({@code mem:NAME} is shared by every
 * client of one JVM), with real child processes for CMD. Ctrl-C and two processes: {@code
 * ElectEndToEndTest}.
 */
class ElectCommandTest {
    @TempDir
    Path dir;

    TestEnvironment env;
    String backend;
    LockClient other;

    @BeforeEach
    void setUp() {
        env = new TestEnvironment(dir);
        backend = "mem:elect-" + UUID.randomUUID();
        other = LockClient.connect(backend);
    }

    @AfterEach
    void tearDown() {
        other.close();
    }

    private int run(String... args) {
        return env.parse(args).execute();
    }

    @Test
    void badArgumentsExitTwoWithTheProblem() {
        assertThat(run("elect", "leader")).isEqualTo(ExitCodes.USAGE);
        assertThat(run("elect", "--lease", "50ms", "leader", "--", "true")).isEqualTo(ExitCodes.USAGE);
        assertThat(env.err.toString(StandardCharsets.UTF_8)).contains("--lease must be at least 100ms, got 50ms");
        assertThat(run("elect", "", "--", "true")).isEqualTo(ExitCodes.USAGE);
        assertThat(env.err.toString(StandardCharsets.UTF_8)).contains("NAME must not be empty");
    }

    @Test
    void aStoreThatCannotBeReachedExits69WithoutRunningTheCommand() throws Exception {
        int port = FreePorts.next(); // nothing listens there
        Path ran = dir.resolve("ran");
        long started = System.nanoTime();
        assertThat(run(
                        "elect",
                        "--backend",
                        "redis://127.0.0.1:" + port + "?unsafeGrantAfterRestart=true",
                        "leader",
                        "--",
                        "touch",
                        ran.toString()))
                .isEqualTo(ExitCodes.UNAVAILABLE);
        assertThat(Duration.ofNanos(System.nanoTime() - started)).isLessThan(Duration.ofSeconds(15));
        assertThat(ran).doesNotExist();
        assertThat(env.err.toString(StandardCharsets.UTF_8)).contains("dlock: the lock store failed");
    }

    @Test
    void runsTheCommandAsLeaderWithItsTermAndResignsWhenItExits() throws Exception {
        Path out = dir.resolve("env.txt");
        int code = run(
                "elect",
                "--backend",
                backend,
                "scheduler",
                "--",
                "sh",
                "-c",
                "echo $DLOCK_NAME $DLOCK_TERM $DLOCK_FENCING_TOKEN > " + out + "; exit 3");
        assertThat(code).isEqualTo(3);
        String[] seen = Files.readString(out).trim().split(" ");
        assertThat(seen[0]).isEqualTo("scheduler");
        assertThat(Long.parseLong(seen[1])).isPositive();
        assertThat(seen[2]).isEqualTo(seen[1]);
        Optional<Lease> free = other.lock("scheduler").tryAcquire();
        assertThat(free).as("resigned when the command exited").isPresent();
        assertThat(free.get().fencingToken()).isGreaterThan(Long.parseLong(seen[1]));
        free.get().close();
        assertThat(run("elect", "--backend", backend, "scheduler", "--", "/no/such/command"))
                .isEqualTo(ExitCodes.NOT_FOUND);
    }

    @Test
    void waitsForLeadershipStopsTheCommandWhenItIsLostAndRunsItAgainInTheNextTerm() throws Exception {
        Lease held = other.lock("scheduler").acquire(Duration.ofSeconds(5));
        Path log = dir.resolve("log");
        Path second = dir.resolve("second");
        // The first term's command runs until stopped; the next term's exits with 5.
        String script = "echo term $DLOCK_TERM >> " + log + "; "
                + "if [ -f " + second + " ]; then exit 5; fi; touch " + second + "; "
                + "trap 'echo stopped >> " + log + "; exit 0' TERM; while true; do sleep 0.05; done";
        CompletableFuture<Integer> elect = CompletableFuture.supplyAsync(() -> run(
                "elect",
                "--backend",
                backend,
                "--lease",
                "1s",
                "--grace",
                "2s",
                "scheduler",
                "--",
                "sh",
                "-c",
                script));
        Thread.sleep(500);
        assertThat(log).as("no command while another process leads").doesNotExist();
        held.close();
        assertThat(eventually(() -> Files.exists(second)))
                .as("elected once the leader left")
                .isTrue();

        assertThat(other.forceRelease("scheduler")).isTrue(); // the store forgets the term: it is lost
        assertThat(elect.get(20, TimeUnit.SECONDS)).isEqualTo(5);
        List<String> lines = Files.readAllLines(log);
        assertThat(lines).hasSize(3);
        assertThat(lines.get(1)).isEqualTo("stopped");
        long first = Long.parseLong(lines.get(0).substring("term ".length()));
        long next = Long.parseLong(lines.get(2).substring("term ".length()));
        assertThat(first).isGreaterThan(held.fencingToken());
        assertThat(next).isGreaterThan(first);
        assertThat(env.err.toString(StandardCharsets.UTF_8))
                .contains("dlock: elected leader of 'scheduler' (term " + first + "); running sh")
                .contains("dlock: lost the leadership of 'scheduler'")
                .contains("stopping sh (SIGTERM, SIGKILL after 2.0s)")
                .contains("dlock: campaigning again for 'scheduler'")
                .contains("(term " + next + ")");
        assertThat(other.lock("scheduler").tryAcquire())
                .as("resigned at the end")
                .isPresent();
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
}
