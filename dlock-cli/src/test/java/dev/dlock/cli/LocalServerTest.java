package dev.dlock.cli;

import static org.assertj.core.api.Assertions.assertThat;

import dev.dlock.testsupport.ChildProcesses;
import java.nio.file.Files;
import java.nio.file.Path;
import java.time.Duration;
import java.util.List;
import java.util.concurrent.Callable;
import java.util.concurrent.ExecutorService;
import java.util.concurrent.Executors;
import java.util.concurrent.Future;
import java.util.concurrent.TimeUnit;
import org.junit.jupiter.api.AfterEach;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;

/** The detached local ZooKeeper server: one per state directory, found again, stopped, never confused. */
class LocalServerTest {
    @TempDir
    Path state;

    @AfterEach
    void stopServer() {
        LocalServer.in(state).stop();
    }

    @Test
    void concurrentStartsMakeOneServerThatStopStops() throws Exception {
        LocalServer server = LocalServer.in(state);
        assertThat(server.status()).isEmpty();
        ExecutorService pool = Executors.newFixedThreadPool(3);
        try {
            Callable<LocalServer.Info> start = () -> LocalServer.in(state).ensureRunning();
            List<Future<LocalServer.Info>> starts = pool.invokeAll(List.of(start, start, start));
            LocalServer.Info first = starts.get(0).get();
            for (Future<LocalServer.Info> other : starts) {
                assertThat(other.get()).isEqualTo(first);
            }
            assertThat(EmbeddedZooKeeper.answers(first.port())).isTrue();
            assertThat(first.uri()).isEqualTo("zookeeper://127.0.0.1:" + first.port());
            assertThat(server.status()).contains(first);
            assertThat(server.ensureRunning()).as("found again, not restarted").isEqualTo(first);
            assertThat(Files.isDirectory(server.dataDir())).isTrue();

            ProcessHandle process = ProcessHandle.of(first.pid()).orElseThrow();
            assertThat(server.stop()).contains(first);
            assertThat(process.onExit().get(15, TimeUnit.SECONDS).isAlive()).isFalse();
            assertThat(server.status()).isEmpty();
            assertThat(state.resolve(LocalServer.INFO_FILE)).doesNotExist();
            assertThat(server.stop()).isEmpty();
        } finally {
            pool.shutdownNow();
        }
    }

    @Test
    void aRecycledPidIsNeitherTakenForTheServerNorKilled() throws Exception {
        // Another live process of ours that is not a server: the pid a recycled info file could name.
        Process stranger = ChildProcesses.start(new ProcessBuilder("sleep", "60"));
        try {
            long pid = stranger.pid();
            Files.writeString(state.resolve(LocalServer.INFO_FILE), "pid=" + pid + "\nport=1\n");
            LocalServer server = LocalServer.in(state);
            assertThat(server.status()).isEmpty();
            assertThat(server.stop()).as("not our server: left alone").isEmpty();
            assertThat(stranger.waitFor(500, TimeUnit.MILLISECONDS))
                    .as("the process the stale file names is still running")
                    .isFalse();

            Files.writeString(state.resolve(LocalServer.INFO_FILE), "pid=" + pid + "\nport=1\n");
            long started = System.nanoTime();
            LocalServer.Info info = server.ensureRunning();
            assertThat(info.pid()).isNotEqualTo(pid);
            assertThat(stranger.isAlive()).isTrue();
            assertThat(Duration.ofNanos(System.nanoTime() - started))
                    .as("no waiting for a process that is not a server")
                    .isLessThan(Duration.ofSeconds(LocalServer.START_TIMEOUT_SECONDS));
            assertThat(EmbeddedZooKeeper.answers(info.port())).isTrue();
        } finally {
            stranger.destroyForcibly();
        }
    }

    @Test
    void garbageInfoFileMeansNoServer() throws Exception {
        Files.writeString(state.resolve(LocalServer.INFO_FILE), "pid=x\n");
        assertThat(LocalServer.in(state).status()).isEmpty();
        assertThat(EmbeddedZooKeeper.answers(1)).isFalse();
    }
}
