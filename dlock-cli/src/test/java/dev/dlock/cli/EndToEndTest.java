package dev.dlock.cli;

import static org.assertj.core.api.Assertions.assertThat;

import java.nio.charset.StandardCharsets;
import java.nio.file.Files;
import java.nio.file.Path;
import java.time.Duration;
import java.util.ArrayList;
import java.util.Comparator;
import java.util.HashMap;
import java.util.List;
import java.util.Map;
import java.util.concurrent.TimeUnit;
import java.util.function.BooleanSupplier;
import org.junit.jupiter.api.AfterEach;
import org.junit.jupiter.api.BeforeEach;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;

/**
 * The {@code dlock} command as real processes on the default backend: the local ZooKeeper server that the
 * first command starts (in a temp state directory), or a ZooKeeper server this test runs and kills.
 */
class EndToEndTest {
    @TempDir
    Path dir;

    CliProcesses cli;

    @BeforeEach
    void setUp() throws Exception {
        cli = new CliProcesses(dir);
    }

    @AfterEach
    void tearDown() {
        cli.close();
        assertThat(cli.serverProcesses()).as("no local server left running").isEmpty();
    }

    private static boolean eventually(Duration limit, BooleanSupplier condition) throws InterruptedException {
        long deadline = System.nanoTime() + limit.toNanos();
        while (System.nanoTime() < deadline) {
            if (condition.getAsBoolean()) {
                return true;
            }
            Thread.sleep(25);
        }
        return condition.getAsBoolean();
    }

    @Test
    void badArgumentsPrintUsageAndExitTwo() throws Exception {
        CliProcesses.Result noCommand = cli.run("run", "job");
        assertThat(noCommand.code()).isEqualTo(2);
        assertThat(noCommand.err())
                .contains("Missing required parameter: 'CMD'")
                .contains("Usage: dlock run");
        assertThat(noCommand.out()).isEmpty();

        CliProcesses.Result both = cli.run("run", "job", "--wait", "1s", "--nonblock", "--", "true");
        assertThat(both.code()).isEqualTo(2);
        assertThat(both.err()).contains("--wait and --nonblock exclude each other");

        assertThat(cli.serverProcesses()).as("bad arguments start nothing").isEmpty();
    }

    @Test
    void runPassesExitCodeAndEnvironmentOnTheLocalServer() throws Exception {
        CliProcesses.Result result =
                cli.run("run", "job:1", "--", "sh", "-c", "echo \"$DLOCK_NAME=$DLOCK_FENCING_TOKEN\"; exit 5");
        assertThat(result.code()).as(result.err()).isEqualTo(5);
        assertThat(result.out().trim()).matches("job:1=\\d+");

        assertThat(Files.exists(cli.stateDir.resolve(LocalServer.INFO_FILE))).isTrue();
        assertThat(cli.serverProcesses()).hasSize(1);
        CliProcesses.Result status = cli.run("server", "status");
        assertThat(status.code()).isZero();
        assertThat(status.out()).contains("local ZooKeeper server running: zookeeper://127.0.0.1:");

        CliProcesses.Result second = cli.run("run", "job:1", "--", "sh", "-c", "echo $DLOCK_FENCING_TOKEN");
        assertThat(second.code()).isZero();
        long first = Long.parseLong(result.out().trim().split("=")[1]);
        assertThat(Long.parseLong(second.out().trim())).isGreaterThan(first);
        assertThat(cli.serverProcesses())
                .as("the second command reuses the server")
                .hasSize(1);

        CliProcesses.Result stop = cli.run("server", "stop");
        assertThat(stop.code()).isZero();
        assertThat(eventually(
                        Duration.ofSeconds(10), () -> cli.serverProcesses().isEmpty()))
                .isTrue();
        CliProcesses.Result stopped = cli.run("server", "status");
        assertThat(stopped.code()).isEqualTo(1);
        assertThat(stopped.out()).contains("the local server is not running");
    }

    @Test
    void concurrentRunsNeverOverlapAndStartOneServer() throws Exception {
        Path log = dir.resolve("critical.log");
        String body = "echo \"$DLOCK_FENCING_TOKEN start $(date +%s%N)\" >> " + log + "; sleep 0.3; "
                + "echo \"$DLOCK_FENCING_TOKEN end $(date +%s%N)\" >> " + log;
        List<CliProcesses.Running> runs = new ArrayList<>();
        for (int i = 0; i < 4; i++) {
            runs.add(cli.start("run", "shared", "--", "sh", "-c", body));
        }
        for (CliProcesses.Running run : runs) {
            CliProcesses.Result result = run.await(90);
            assertThat(result.code()).as(result.err()).isZero();
        }
        assertThat(cli.serverProcesses())
                .as("four commands starting the server at once make one")
                .hasSize(1);

        Map<Long, long[]> intervals = new HashMap<>();
        for (String line : Files.readAllLines(log, StandardCharsets.UTF_8)) {
            String[] parts = line.split(" ");
            long[] interval = intervals.computeIfAbsent(Long.parseLong(parts[0]), token -> new long[2]);
            interval[parts[1].equals("start") ? 0 : 1] = Long.parseLong(parts[2]);
        }
        assertThat(intervals).hasSize(4);
        List<Map.Entry<Long, long[]>> byStart = intervals.entrySet().stream()
                .sorted(Comparator.comparingLong(e -> e.getValue()[0]))
                .toList();
        for (int i = 1; i < byStart.size(); i++) {
            long[] previous = byStart.get(i - 1).getValue();
            long[] current = byStart.get(i).getValue();
            assertThat(current[0])
                    .as(
                            "run with token %s started before the previous one ended",
                            byStart.get(i).getKey())
                    .isGreaterThanOrEqualTo(previous[1]);
            assertThat(byStart.get(i).getKey())
                    .as("fencing tokens increase in lock order")
                    .isGreaterThan(byStart.get(i - 1).getKey());
        }
    }

    @Test
    void busyLockStatusListAndForcedRelease() throws Exception {
        Path marker = dir.resolve("holding");
        CliProcesses.Running holder =
                cli.start("run", "nightly", "--", "sh", "-c", "touch " + marker + "; exec sleep 60");
        assertThat(eventually(Duration.ofSeconds(60), () -> Files.exists(marker)))
                .as("holder started")
                .isTrue();
        String holderPid = Long.toString(holder.process.pid());

        CliProcesses.Result busy = cli.run("run", "--nonblock", "nightly", "--", "true");
        assertThat(busy.code()).isEqualTo(1);
        assertThat(busy.err()).contains("'nightly' is busy, held by " + holderPid + "@");

        CliProcesses.Result timedOut = cli.run("run", "--wait", "500ms", "nightly", "--", "true");
        assertThat(timedOut.code()).isEqualTo(1);
        assertThat(timedOut.err()).contains("timed out after 500ms waiting for 'nightly', held by " + holderPid + "@");

        CliProcesses.Result status = cli.run("status", "nightly");
        assertThat(status.code()).isZero();
        assertThat(status.out())
                .contains("holder " + holderPid + "@")
                .as("ZooKeeper's lease is the holder's session: no '?' for the lease left")
                .contains("expires in session")
                .doesNotContain("?");

        CliProcesses.Result list = cli.run("ls", "night");
        assertThat(list.code()).isZero();
        assertThat(list.out())
                .contains("nightly")
                .contains(holderPid + "@")
                .contains("session")
                .doesNotContain("?");

        CliProcesses.Result released = cli.run("release", "--force", "--yes", "nightly");
        assertThat(released.code()).as(released.err()).isZero();
        CliProcesses.Result after = cli.run("run", "--nonblock", "nightly", "--", "true");
        assertThat(after.code()).as("the lock is free after release --force").isZero();
    }

    @Test
    void lostLeaseStopsTheCommandWhenTheStoreDies() throws Exception {
        Path data = dir.resolve("zk");
        EmbeddedZooKeeper zookeeper = EmbeddedZooKeeper.start(data, 0);
        Path marker = dir.resolve("running");
        CliProcesses.Running run;
        try {
            run = cli.start(
                    "run",
                    "--backend",
                    zookeeper.uri() + "?sessionTimeout=3s",
                    "--grace",
                    "2s",
                    "job",
                    "--",
                    "sh",
                    "-c",
                    "touch " + marker + "; exec sleep 120");
            assertThat(eventually(Duration.ofSeconds(60), () -> Files.exists(marker)))
                    .as("command started")
                    .isTrue();
        } finally {
            zookeeper.close();
        }
        long killed = System.nanoTime();
        CliProcesses.Result result = run.await(30);
        assertThat(result.code()).isEqualTo(ExitCodes.LEASE_LOST);
        assertThat(result.err()).contains("dlock: lost the lock 'job'").contains("stopping sh (SIGTERM");
        assertThat(Duration.ofNanos(System.nanoTime() - killed)).isLessThan(Duration.ofSeconds(20));
        assertThat(run.process.descendants().filter(ProcessHandle::isAlive).toList())
                .isEmpty();
    }

    private static void interrupt(Process process) throws Exception {
        Process kill = new ProcessBuilder("kill", "-INT", Long.toString(process.pid())).start();
        assertThat(kill.waitFor(10, TimeUnit.SECONDS)).isTrue();
        assertThat(kill.exitValue()).isZero();
    }

    @Test
    void interruptStopsTheCommandAndReleases() throws Exception {
        Path marker = dir.resolve("running");
        Path after = dir.resolve("after-term");
        CliProcesses.Running run = cli.start(
                "run",
                "job",
                "--",
                "sh",
                "-c",
                "trap 'touch " + after + "; exit 0' TERM; touch " + marker + "; while true; do sleep 0.1; done");
        assertThat(eventually(Duration.ofSeconds(60), () -> Files.exists(marker)))
                .isTrue();

        Path waiterRan = dir.resolve("waiter-ran");
        CliProcesses.Running waiter = cli.start("run", "job", "--", "touch", waiterRan.toString());
        Thread.sleep(4_000); // the waiter's JVM starts and queues for the lock
        interrupt(waiter.process);
        CliProcesses.Result stoppedWaiting = waiter.await(30);
        assertThat(stoppedWaiting.code()).as(stoppedWaiting.err()).isEqualTo(ExitCodes.INTERRUPTED);
        assertThat(waiterRan).as("an interrupted waiter never runs its command").doesNotExist();

        interrupt(run.process);
        CliProcesses.Result result = run.await(30);
        assertThat(result.code()).isEqualTo(ExitCodes.INTERRUPTED);
        assertThat(after).as("the command got SIGTERM").exists();
        CliProcesses.Result next = cli.run("run", "--nonblock", "job", "--", "touch", waiterRan.toString());
        assertThat(next.code()).as("released on Ctrl-C: %s", next.err()).isZero();
        assertThat(waiterRan).exists();
    }
}
