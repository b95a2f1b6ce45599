package dev.dlock.cli;

import static org.assertj.core.api.Assertions.assertThat;

import dev.dlock.testsupport.RedisProcess;
import java.nio.file.Files;
import java.nio.file.Path;
import java.time.Duration;
import java.util.List;
import java.util.concurrent.TimeUnit;
import java.util.function.BooleanSupplier;
import org.junit.jupiter.api.AfterEach;
import org.junit.jupiter.api.BeforeEach;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;

/**
 * Two {@code dlock elect} processes on a {@code redis-server} this test runs: one leads at a time; a leader
 * paused with SIGSTOP is replaced within a lease and, resumed, stops its command and campaigns again; a
 * leader stopped with SIGTERM stops its command and hands over; a command that exits ends its process with
 * its code. Each command logs its term, so the terms can be checked to increase from leader to leader.
 */
class ElectEndToEndTest {
    private static final Duration LEASE = Duration.ofSeconds(2);

    @TempDir
    Path dir;

    CliProcesses cli;
    RedisProcess redis;

    @BeforeEach
    void setUp() throws Exception {
        cli = new CliProcesses(dir);
        redis = RedisProcess.start();
    }

    @AfterEach
    void tearDown() throws Exception {
        cli.close();
        redis.close();
    }

    /** A candidate whose command logs "ID term N", runs until SIGTERM ("ID stopped") or file finish-ID. */
    private CliProcesses.Running candidate(String id) throws Exception {
        Path log = dir.resolve("log");
        Path running = dir.resolve("running-" + id);
        String script = "echo " + id + " term $DLOCK_TERM >> " + log + "; touch " + running + "; "
                + "trap 'echo " + id + " stopped >> " + log + "; rm -f " + running + "; exit 0' TERM; "
                + "while [ ! -f " + dir.resolve("finish-" + id) + " ]; do sleep 0.05; done; rm -f " + running
                + "; exit 3";
        // A fresh server holds each namespace's first grant back for 30 s by default (it cannot be told from
        // one that lost its state); this test is not about restarts, so it opts out.
        String uri = "redis://127.0.0.1:" + redis.port() + "?unsafeGrantAfterRestart=true";
        return cli.start(
                "elect", "--backend", uri, "--lease", "2s", "--grace", "2s", "nightly", "--", "sh", "-c", script);
    }

    private boolean leads(String id) {
        return Files.exists(dir.resolve("running-" + id));
    }

    @Test
    void oneLeaderAtATimeThroughAPauseAnInterruptAndAnExit() throws Exception {
        CliProcesses.Running a = candidate("a");
        CliProcesses.Running b = candidate("b");
        assertThat(eventually(Duration.ofSeconds(60), () -> leads("a") || leads("b")))
                .as("one is elected")
                .isTrue();
        Thread.sleep(LEASE.toMillis() * 2); // renewals keep the leader; the other waits
        String first = leads("a") ? "a" : "b";
        String second = first.equals("a") ? "b" : "a";
        CliProcesses.Running leader = first.equals("a") ? a : b;
        CliProcesses.Running follower = first.equals("a") ? b : a;
        assertThat(leads(second)).isFalse();
        assertThat(log()).containsExactly(first + " term " + term(0));

        // A paused leader: the store lets its term run out, the other is elected within a lease.
        signal(leader.process, "-STOP");
        long paused = System.nanoTime();
        assertThat(eventually(LEASE.plusSeconds(5), () -> leads(second))).isTrue();
        Duration takeover = Duration.ofNanos(System.nanoTime() - paused);
        assertThat(takeover).isLessThan(LEASE.plusSeconds(3));
        // Resumed, it learns that its term is over, stops its command and campaigns again.
        signal(leader.process, "-CONT");
        assertThat(eventually(Duration.ofSeconds(10), () -> !leads(first))).isTrue();
        assertThat(eventually(Duration.ofSeconds(10), () -> stderr(leader).contains("campaigning again")))
                .isTrue();
        assertThat(leader.process.isAlive()).isTrue();
        assertThat(leads(second)).isTrue();

        // SIGTERM (as from a supervisor; Ctrl-C takes the same path, but a process started in the background
        // without job control ignores SIGINT): its command is stopped, it resigns, the other is elected at once.
        signal(follower.process, "-TERM");
        assertThat(awaitOrDump(follower).code()).isEqualTo(128 + 15);
        assertThat(eventually(LEASE, () -> leads(first)))
                .as("handed over, not run out")
                .isTrue();

        // The leader's command exits by itself: its process resigns and exits with the command's code.
        Files.createFile(dir.resolve("finish-" + first));
        assertThat(leader.await(30).code()).isEqualTo(3);

        List<String> log = log();
        assertThat(log)
                .containsExactly(
                        first + " term " + term(0),
                        second + " term " + term(1),
                        first + " stopped",
                        second + " stopped",
                        first + " term " + term(4));
        assertThat(term(1)).isGreaterThan(term(0));
        assertThat(term(4)).isGreaterThan(term(1));
        System.out.println("elect: taken over " + takeover.toMillis() + " ms after the leader's SIGSTOP");
    }

    private static CliProcesses.Result awaitOrDump(CliProcesses.Running run) throws Exception {
        try {
            return run.await(30);
        } catch (AssertionError e) {
            Process dump = new ProcessBuilder("jcmd", Long.toString(run.process.pid()), "Thread.print")
                    .redirectErrorStream(true)
                    .start();
            String threads = new String(dump.getInputStream().readAllBytes());
            System.out.println("DIAG threads of the process that did not exit:\n" + threads);
            throw e;
        }
    }

    private List<String> log() throws Exception {
        return Files.readAllLines(dir.resolve("log"));
    }

    private long term(int line) throws Exception {
        String entry = log().get(line);
        return Long.parseLong(entry.substring(entry.indexOf("term ") + "term ".length()));
    }

    private static String stderr(CliProcesses.Running run) {
        try {
            return run.err();
        } catch (java.io.IOException e) {
            throw new java.io.UncheckedIOException(e);
        }
    }

    private static void signal(Process process, String signal) throws Exception {
        Process kill = new ProcessBuilder("kill", signal, Long.toString(process.pid())).start();
        assertThat(kill.waitFor(10, TimeUnit.SECONDS)).isTrue();
        assertThat(kill.exitValue()).isZero();
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
}
