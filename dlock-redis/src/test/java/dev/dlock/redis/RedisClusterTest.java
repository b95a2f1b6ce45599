package dev.dlock.redis;

import static org.assertj.core.api.Assertions.assertThat;

import dev.dlock.Lease;
import dev.dlock.LockClient;
import dev.dlock.LockListener;
import io.lettuce.core.cluster.SlotHash;
import java.time.Duration;
import java.util.ArrayList;
import java.util.HashSet;
import java.util.List;
import java.util.Set;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.CopyOnWriteArrayList;
import java.util.concurrent.TimeUnit;
import org.junit.jupiter.api.AfterAll;
import org.junit.jupiter.api.BeforeAll;
import org.junit.jupiter.api.Test;

/** Cluster specifics: renewal is one command per node per tick, and every lock kind works across slots. */
class RedisClusterTest {
    private static RedisClusterServers cluster;

    @BeforeAll
    static void startCluster() {
        cluster = RedisClusterServers.start();
    }

    @AfterAll
    static void stopCluster() {
        cluster.close();
    }

    @Test
    void renewalSendsOneCommandPerNodePerTick() throws Exception {
        int leases = 1_000;
        List<Integer> ticks = new CopyOnWriteArrayList<>();
        LockListener listener = new LockListener() {
            @Override
            public void renewed(int count, int lost) {
                ticks.add(count);
            }
        };
        try (LockClient client = LockClient.builder(cluster.uri())
                .namespace("cluster-renew")
                .leaseTime(Duration.ofSeconds(6))
                .listener(listener)
                .build()) {
            acquireAll(client, "warm-", leases).forEach(Lease::close);
            List<Lease> held = acquireAll(client, "lease-", leases);
            Set<Integer> slots = new HashSet<>();
            for (int i = 0; i < leases; i++) {
                slots.add(SlotHash.getSlot(ResourceKeys.of(
                                new dev.dlock.spi.LockKey("cluster-renew", "lease-" + i, dev.dlock.spi.Mode.EXCLUSIVE))
                        .prefix()));
            }
            assertThat(slots.size()).as("the leases spread over many slots").isGreaterThan(900);
            long deadline = System.nanoTime() + TimeUnit.SECONDS.toNanos(10);
            // The first ticks bring leases granted at slightly different times into step.
            while (ticks.size() < 2 && System.nanoTime() < deadline) {
                Thread.sleep(10);
            }
            long[] before = evalshaCalls();
            int ticksBefore = ticks.size();
            Thread.sleep(4_500);
            long[] after = evalshaCalls();
            int ticksSeen = ticks.size() - ticksBefore;
            assertThat(ticksSeen).isGreaterThanOrEqualTo(2);
            for (int node = 0; node < 3; node++) {
                long calls = after[node] - before[node];
                // one per tick per node, give or take a tick in flight at either edge of the window
                assertThat(calls).as("renew commands on node " + node).isBetween(ticksSeen - 1L, ticksSeen + 1L);
            }
            System.out.printf(
                    "cluster renewal: %d leases on %d slots, %d ticks, renew commands per node %d/%d/%d%n",
                    leases, slots.size(), ticksSeen, after[0] - before[0], after[1] - before[1], after[2] - before[2]);
            assertThat(ticks.subList(ticksBefore, ticks.size())).containsOnly(leases);
            assertThat(held).allMatch(Lease::isValid);
        }
    }

    @Test
    void namesWithBracesKeepEveryKeyOfALockInOneSlot() {
        try (LockClient client =
                LockClient.builder(cluster.uri()).namespace("braces").build()) {
            for (String name : List.of("{a}", "}{", "{}", "x{y}z", "{{{", "}}}")) {
                try (Lease lock = client.lock(name).acquire(Duration.ofSeconds(5));
                        Lease fair = client.fairLock(name).acquire(Duration.ofSeconds(5));
                        Lease read = client.readWriteLock(name).readLock().acquire(Duration.ofSeconds(5));
                        Lease permit = client.semaphore(name, 2).acquire(Duration.ofSeconds(5))) {
                    assertThat(List.of(lock, fair, read, permit)).allMatch(Lease::isValid);
                    assertThat(client.describe(name)).hasSize(4);
                }
            }
            assertThat(client.list("")).isEmpty();
        }
    }

    private static long[] evalshaCalls() {
        long[] calls = new long[3];
        for (int i = 0; i < 3; i++) {
            String info = (String) cluster.nodes().get(i).call("INFO", "commandstats");
            for (String line : info.split("\r\n")) {
                if (line.startsWith("cmdstat_evalsha:")) {
                    String rest = line.substring(line.indexOf("calls=") + 6);
                    calls[i] = Long.parseLong(rest.substring(0, rest.indexOf(',')));
                }
            }
        }
        return calls;
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
}
