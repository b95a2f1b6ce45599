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
            RoundTripAndRenewalTest.awaitFullTick(ticks, leases, Integer::intValue);
            long[] before = scriptCalls();
            int ticksBefore = ticks.size();
            RoundTripAndRenewalTest.awaitSize(ticks, ticksBefore + 2); // two ticks of about 2 s
            long[] after = scriptCalls();
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
    void renewalFollowsASlotThatMovedToAnotherNode() throws Exception {
        List<Integer> lost = new CopyOnWriteArrayList<>();
        LockListener listener = new LockListener() {
            @Override
            public void renewed(int count, int lostCount) {
                lost.add(lostCount);
            }
        };
        try (LockClient client = LockClient.builder(cluster.uri())
                .namespace("moving")
                .leaseTime(Duration.ofSeconds(3))
                .listener(listener)
                .build()) {
            List<Lease> held = acquireAll(client, "m", 30);
            RedisServer from = cluster.nodes().get(0);
            RedisServer to = cluster.nodes().get(1);
            // A lease whose slot the first node serves; move that slot to the second node behind the
            // client's back, so its next renewal meets a stale slot map.
            String prefix = null;
            for (int i = 0; i < 30 && prefix == null; i++) {
                String candidate = ResourceKeys.of(
                                new dev.dlock.spi.LockKey("moving", "m" + i, dev.dlock.spi.Mode.EXCLUSIVE))
                        .prefix();
                int slot = SlotHash.getSlot(candidate);
                if ((Long) from.call("CLUSTER", "COUNTKEYSINSLOT", Integer.toString(slot)) > 0) {
                    prefix = candidate;
                }
            }
            assertThat(prefix).as("some lease lives on the first node").isNotNull();
            String slot = Integer.toString(SlotHash.getSlot(prefix));
            moveSlot(slot, from, to);
            int ticksBefore = lost.size();
            long deadline = System.nanoTime() + TimeUnit.SECONDS.toNanos(10);
            while (lost.size() < ticksBefore + 2 && System.nanoTime() < deadline) {
                Thread.sleep(20);
            }
            assertThat(lost.size()).isGreaterThanOrEqualTo(ticksBefore + 2);
            assertThat(lost).containsOnly(0);
            assertThat(held).allMatch(Lease::isValid);
            // Renewed where the slot lives now (the exclusive lock's one key is its hold, ":h").
            assertThat((Long) to.call("PTTL", prefix + ":h")).isGreaterThan(1_000L);
            assertThat((Long) from.call("CLUSTER", "COUNTKEYSINSLOT", slot)).isZero();
            held.forEach(Lease::close);
        }
    }

    /** Migrates one slot with its keys, the way {@code redis-cli --cluster reshard} does. */
    private static void moveSlot(String slot, RedisServer from, RedisServer to) {
        String fromId = (String) from.call("CLUSTER", "MYID");
        String toId = (String) to.call("CLUSTER", "MYID");
        to.call("CLUSTER", "SETSLOT", slot, "IMPORTING", fromId);
        from.call("CLUSTER", "SETSLOT", slot, "MIGRATING", toId);
        List<?> keys = (List<?>) from.call("CLUSTER", "GETKEYSINSLOT", slot, "100");
        List<String> migrate =
                new ArrayList<>(List.of("MIGRATE", "127.0.0.1", Integer.toString(to.port()), "", "0", "5000", "KEYS"));
        keys.forEach(k -> migrate.add((String) k));
        from.call(migrate.toArray(String[]::new));
        for (RedisServer node : List.of(to, from, cluster.nodes().get(2))) {
            node.call("CLUSTER", "SETSLOT", slot, "NODE", toId);
        }
    }

    /**
     * The function library deleted on every node while a client runs: its calls are served by scripts, and
     * the library is loaded again on every master.
     */
    @Test
    void aLibraryFlushedOnEveryNodeIsLoadedAgainOnEveryMaster() throws Exception {
        try (LockClient client =
                LockClient.builder(cluster.uri()).namespace("reload").build()) {
            client.lock("before").acquire(Duration.ofSeconds(5)).close();
            for (RedisServer node : cluster.nodes()) {
                node.call("FUNCTION", "FLUSH");
            }
            for (int i = 0; i < 20; i++) { // names over every node's slots
                client.lock("after-" + i).acquire(Duration.ofSeconds(5)).close();
            }
            long deadline = System.nanoTime() + TimeUnit.SECONDS.toNanos(10);
            for (RedisServer node : cluster.nodes()) {
                while (!node.call("FUNCTION", "LIST").toString().contains("dlock_") && System.nanoTime() < deadline) {
                    RedisServer.sleep(20);
                }
                assertThat(node.call("FUNCTION", "LIST").toString())
                        .as("the library on node " + node.port())
                        .contains("dlock_");
            }
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

    /** Script calls per node: functions ({@code FCALL}) and scripts ({@code EVALSHA}, {@code EVAL}). */
    private static long[] scriptCalls() {
        long[] calls = new long[3];
        for (int i = 0; i < 3; i++) {
            String info = (String) cluster.nodes().get(i).call("INFO", "commandstats");
            for (String line : info.split("\r\n")) {
                if (line.startsWith("cmdstat_fcall:")
                        || line.startsWith("cmdstat_evalsha:")
                        || line.startsWith("cmdstat_eval:")) {
                    String rest = line.substring(line.indexOf("calls=") + 6);
                    calls[i] += Long.parseLong(rest.substring(0, rest.indexOf(',')));
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
