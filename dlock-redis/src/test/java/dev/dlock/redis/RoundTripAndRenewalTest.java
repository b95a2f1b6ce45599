package dev.dlock.redis;

import static org.assertj.core.api.Assertions.assertThat;

import dev.dlock.DistributedLock;
import dev.dlock.Lease;
import dev.dlock.LockClient;
import dev.dlock.LockListener;
import java.time.Duration;
import java.util.ArrayList;
import java.util.List;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.CopyOnWriteArrayList;
import java.util.concurrent.TimeUnit;
import org.junit.jupiter.api.AfterAll;
import org.junit.jupiter.api.BeforeAll;
import org.junit.jupiter.api.Test;

/**
 * Counts what the server executes ({@code MONITOR}, {@code INFO commandstats}): an uncontended acquire and
 * a release are one command each, and renewal sends one command per tick for 1,000 leases.
 */
class RoundTripAndRenewalTest {
    private static RedisServer server;

    @BeforeAll
    static void startServer() {
        server = RedisServer.start();
    }

    @AfterAll
    static void stopServer() {
        server.close();
    }

    @Test
    void uncontendedAcquireAndReleaseAreOneRoundTripEach() {
        try (LockClient client =
                        LockClient.builder(server.uri()).namespace("rt").build();
                Monitor monitor = Monitor.start(server.port())) {
            DistributedLock lock = client.lock("round-trips");
            lock.tryAcquire().orElseThrow().close(); // warm up the JIT, not the server: the library is preloaded
            long fcallBefore = commandCalls("fcall");
            monitor.sync(server.port());
            monitor.clear();
            int cycles = 20;
            for (int i = 0; i < cycles; i++) {
                Lease lease = lock.tryAcquire().orElseThrow();
                lease.close();
            }
            monitor.sync(server.port());
            List<String> names = monitor.names();
            assertThat(names).hasSize(2 * cycles).containsOnly("FCALL");
            List<String> operations = new ArrayList<>();
            for (String line : monitor.commands("FCALL")) {
                operations.add(Monitor.scriptOperation(line));
            }
            for (int i = 0; i < cycles; i++) {
                assertThat(operations.subList(2 * i, 2 * i + 2)).containsExactly("acquire", "release");
            }
            assertThat(commandCalls("fcall") - fcallBefore).isEqualTo(2L * cycles);
        }
    }

    @Test
    void firstOperationAfterAFlushFallsBackToEvalOnceAndLoadsTheLibraryAgain() {
        try (LockClient client =
                LockClient.builder(server.uri()).namespace("flush").build()) {
            server.call("FUNCTION", "FLUSH");
            server.call("SCRIPT", "FLUSH");
            try (Monitor monitor = Monitor.start(server.port())) {
                client.lock("after-flush").tryAcquire().orElseThrow().close();
                monitor.sync(server.port());
                // acquire: FCALL ("Function not found"), FUNCTION LOAD on the same connection, EVALSHA
                // (NOSCRIPT) + EVAL; release: FCALL, the library being back
                assertThat(monitor.names()).containsExactly("FCALL", "FUNCTION", "EVALSHA", "EVAL", "FCALL");
            }
        }
    }

    @Test
    void renewalSendsOneCommandPerTickForAThousandLeases() throws Exception {
        int leases = 1_000;
        List<int[]> ticks = new CopyOnWriteArrayList<>();
        LockListener listener = new LockListener() {
            @Override
            public void renewed(int count, int lost) {
                ticks.add(new int[] {count, lost});
            }
        };
        try (LockClient client = LockClient.builder(server.uri())
                .namespace("renew")
                .leaseTime(Duration.ofSeconds(6))
                .listener(listener)
                .build()) {
            int[] windowStart = new int[1];
            // Warm up (JIT, connections) so that the 1,000 grants below land within a sixth of the lease
            // time of each other, which is what puts them into one renewal batch.
            acquireAll(client, "warm-", leases).forEach(Lease::close);
            List<Lease> held = acquireAll(client, "lease-", leases);
            awaitFullTick(ticks, leases, tick -> tick[0]);
            try (Monitor monitor = Monitor.start(server.port())) {
                int ticksBefore = ticks.size();
                windowStart[0] = ticksBefore;
                awaitSize(ticks, ticksBefore + 2); // two ticks of about 2 s
                int ticksSeen = ticks.size() - ticksBefore;
                monitor.sync(server.port());
                List<String> renewals = monitor.commands("FCALL");
                assertThat(monitor.names()).containsOnly("FCALL");
                assertThat(ticksSeen).isGreaterThanOrEqualTo(2);
                // One command per tick (give or take the tick in flight at either edge), each renewing all.
                assertThat(renewals.size()).isBetween(ticksSeen - 1, ticksSeen + 1);
                for (String line : renewals) {
                    List<String> args = Monitor.arguments(line);
                    assertThat(Monitor.scriptOperation(line)).isEqualTo("renew");
                    assertThat((args.size() - 4) / 3).isEqualTo(leases);
                }
                System.out.printf(
                        "renewal: %d leases, %d ticks, %d renew commands%n", leases, ticksSeen, renewals.size());
            }
            for (int[] tick : ticks.subList(windowStart[0], ticks.size())) {
                assertThat(tick[0]).isEqualTo(leases);
                assertThat(tick[1]).isZero();
            }
            assertThat(held).allMatch(Lease::isValid);
        }
    }

    private static List<Lease> acquireAll(LockClient client, String prefix, int count) throws Exception {
        List<CompletableFuture<Lease>> pending = new ArrayList<>();
        for (int i = 0; i < count; i++) {
            pending.add(client.lock(prefix + i).acquireAsync(Duration.ofSeconds(10)));
        }
        List<Lease> held = new ArrayList<>();
        for (CompletableFuture<Lease> f : pending) {
            held.add(f.get(30, TimeUnit.SECONDS));
        }
        return held;
    }

    static void awaitSize(List<?> list, int size) throws InterruptedException {
        long deadline = System.nanoTime() + TimeUnit.SECONDS.toNanos(20);
        while (list.size() < size && System.nanoTime() < deadline) {
            Thread.sleep(10);
        }
        assertThat(list).hasSizeGreaterThanOrEqualTo(size);
    }

    /**
     * Waits for a tick that renewed every lease. Leases granted over more than a sixth of the lease time
     * start in several batches; each tick also takes the leases due soon after it, so the batches merge
     * within a few ticks.
     */
    static <T> void awaitFullTick(List<T> ticks, int leases, java.util.function.ToIntFunction<T> count)
            throws InterruptedException {
        long deadline = System.nanoTime() + TimeUnit.SECONDS.toNanos(60);
        while ((ticks.isEmpty() || count.applyAsInt(ticks.get(ticks.size() - 1)) != leases)
                && System.nanoTime() < deadline) {
            Thread.sleep(10);
        }
        assertThat(count.applyAsInt(ticks.get(ticks.size() - 1)))
                .as("a tick renewed all leases")
                .isEqualTo(leases);
    }

    private static long commandCalls(String command) {
        String info = (String) server.call("INFO", "commandstats");
        for (String line : info.split("\r\n")) {
            if (line.startsWith("cmdstat_" + command + ":")) {
                String calls = line.substring(line.indexOf("calls=") + 6);
                return Long.parseLong(calls.substring(0, calls.indexOf(',')));
            }
        }
        return 0;
    }
}
