package dev.dlock.chaos;

import dev.dlock.testsupport.RedisProcess;
import dev.dlock.testsupport.SteppedClock;
import java.nio.file.Path;
import java.time.Duration;
import java.util.ArrayList;
import java.util.EnumSet;
import java.util.List;
import java.util.Random;
import java.util.Set;

/**
 * The Redis stores: standalone (without persistence, or with {@code appendfsync always}), Sentinel (one
 * master, two replicas, three Sentinels) and Cluster (three masters, no replicas).
 *
 * <p>Failure modes injected: a killed server is restarted at once or when the fault heals (even odds); a
 * killed standalone server comes back empty (no persistence) or with every acknowledged write (fsync
 * always); a killed or paused Sentinel master is failed over after 1 s and
 * comes back as a master until the Sentinels demote it (a real split-brain window); a killed Cluster node
 * takes the Cluster down ({@code cluster-require-full-coverage}) until it is back.
 *
 * <p>Clock fault ({@code clock-store}) on the persistent standalone server and the Redlock masters (where
 * a restart keeps the token counter; without persistence tokens are documented to regress when the clock
 * steps back after a restart, so {@code redis} has none): each runs on a {@link
 * SteppedClock} (a preload that offsets the wall clock only, as an NTP step does; libfaketime cannot be
 * preloaded into Debian's {@code redis-server}, whose jemalloc reads the clock while libfaketime
 * initialises), stepped 2 to 7 s forward or back and back again when the fault heals. Redis expires keys
 * by that clock: a forward step ends holds early (the clients see the step in their renewals' {@code
 * TIME} and declare their leases lost, docs/safety.md). Without a C compiler to build the preload there is
 * no clock fault. Sentinel and Cluster have none yet.
 */
final class RedisStores {
    private RedisStores() {}

    static Store standalone(String host, Path dir, boolean fsyncAlways) {
        String[] persistence = fsyncAlways
                ? new String[] {"--appendonly", "yes", "--appendfsync", "always"}
                : new String[] {"--appendonly", "no"};
        // No clock fault without persistence: there a restart loses the token counter and the next token is
        // the server clock, so a clock stepped back after a restart makes tokens regress (the documented
        // limit, docs/dlock-redis.md "Fencing tokens"; seen as 12 regressions with seed 31).
        SteppedClock clock = fsyncAlways ? steppedClock() : null;
        RedisProcess server = clock == null
                ? RedisProcess.startOn(host, dir, persistence)
                : RedisProcess.startOn(clock, host, dir, persistence);
        return new Standalone(server, clock);
    }

    /** A clock for one server, or null when the preload cannot be built (no C compiler). */
    private static SteppedClock steppedClock() {
        try {
            return new SteppedClock();
        } catch (IllegalStateException noCompiler) {
            System.err.println("[chaos] no clock-store fault on Redis: " + noCompiler.getMessage());
            return null;
        }
    }

    static Store sentinel(String host, Path dir) {
        return Sentinel.start(host, dir);
    }

    static Store cluster(String host, Path dir) {
        return Cluster.start(host, dir);
    }

    static Store redlock(String host, Path dir) {
        List<RedisProcess> masters = new ArrayList<>();
        List<SteppedClock> clocks = new ArrayList<>();
        try {
            for (int i = 0; i < 3; i++) {
                SteppedClock clock = steppedClock();
                String[] persistence = {"--appendonly", "yes", "--appendfsync", "always"};
                masters.add(
                        clock == null
                                ? RedisProcess.startOn(host, dir, persistence)
                                : RedisProcess.startOn(clock, host, dir, persistence));
                clocks.add(clock);
            }
            return new Redlock(masters, clocks.contains(null) ? List.of() : clocks);
        } catch (RuntimeException e) {
            masters.forEach(RedisProcess::close);
            throw e;
        }
    }

    /** One command through {@code redis-cli}; the raw reply text. */
    static String cli(RedisProcess node, String... command) {
        List<String> full =
                new ArrayList<>(List.of("redis-cli", "-h", node.host(), "-p", Integer.toString(node.port())));
        full.addAll(List.of(command));
        return Proc.run(10, full);
    }

    static long countLeftovers(RedisProcess node) {
        String keys = cli(node, "--scan");
        return keys.lines().filter(k -> !k.isBlank() && !k.endsWith(":t")).count();
    }

    /**
     * SIGKILL and restart: every other time (by the run's random) at once, so that the server is back
     * while the leases it forgot are still valid (the hold-back after a lost state is what keeps the next
     * grant from overlapping them), else when the fault heals, after the leases ran out.
     */
    static Store.Injection killAndRestart(RedisProcess node, Random random, Runnable afterRestart) {
        node.kill();
        Runnable restart = () -> {
            node.restart();
            afterRestart.run();
        };
        if (random.nextBoolean()) {
            restart.run();
            return new Store.Injection(node.address() + " (restarted at once)", () -> {});
        }
        return new Store.Injection(node.address(), restart);
    }

    /** Steps the server's wall clock 2 to 7 s forward or back (even odds); the heal steps it back. */
    static Store.Injection stepClock(RedisProcess node, SteppedClock clock, Random random) {
        Duration step = Duration.ofSeconds((random.nextBoolean() ? 1 : -1) * (2 + random.nextInt(6)));
        clock.step(step);
        return new Store.Injection(
                node.address() + " clock " + step.toSeconds() + "s", () -> clock.step(step.negated()));
    }

    static Store.Injection pause(RedisProcess node) {
        node.freeze();
        return new Store.Injection(node.address(), node::thaw);
    }

    /** One server; {@code clock} steps its wall clock, null when there is no clock fault. */
    private record Standalone(RedisProcess server, SteppedClock clock) implements Store {
        @Override
        public String clientUri() {
            return "redis://" + server.address();
        }

        @Override
        public String workloadUri(long leaseMillis) {
            return clientUri() + "?maxLease=" + leaseMillis + "ms";
        }

        /** With clock steps: a hold granted during a forward step of up to 7 s outlives the heal by as much. */
        @Override
        public long marginMillis() {
            return clock == null ? 5_000 : 10_000;
        }

        @Override
        public Set<Fault> faults() {
            Set<Fault> set = EnumSet.of(Fault.KILL_STORE, Fault.PAUSE_STORE);
            if (clock != null) {
                set.add(Fault.CLOCK_STORE);
            }
            return set;
        }

        @Override
        public Injection inject(Fault fault, Random random, long durationMillis) {
            return switch (fault) {
                case KILL_STORE -> killAndRestart(server, random, () -> {});
                case PAUSE_STORE -> pause(server);
                case CLOCK_STORE -> stepClock(server, clock, random);
                default -> throw new IllegalArgumentException(fault.id());
            };
        }

        @Override
        public long leftovers() {
            return countLeftovers(server);
        }

        @Override
        public void close() {
            server.close();
        }
    }

    private static final class Sentinel implements Store {
        static final String MASTER = "chaosmaster";
        static final Duration FAILOVER_TIMEOUT = Duration.ofSeconds(4);
        private final List<RedisProcess> data = new ArrayList<>();
        private final List<RedisProcess> sentinels = new ArrayList<>();

        static Sentinel start(String host, Path dir) {
            Sentinel s = new Sentinel();
            try {
                RedisProcess master = RedisProcess.startOn(host, dir, "--replica-announce-ip", host);
                s.data.add(master);
                for (int i = 0; i < 2; i++) {
                    s.data.add(RedisProcess.startOn(
                            host,
                            dir,
                            "--replica-announce-ip",
                            host,
                            "--replicaof",
                            host,
                            Integer.toString(master.port())));
                }
                Proc.await("the replicas did not sync", 30, () -> cli(master, "INFO", "replication")
                        .contains("connected_slaves:2"));
                for (int i = 0; i < 3; i++) {
                    s.sentinels.add(RedisProcess.sentinel(host, dir, master.port(), MASTER, FAILOVER_TIMEOUT));
                }
                Proc.await("the Sentinels did not discover each other and the replicas", 30, () -> {
                    for (RedisProcess sentinel : s.sentinels) {
                        String info = cli(sentinel, "SENTINEL", "MASTER", MASTER);
                        if (!info.contains("num-slaves\n2") || !info.contains("num-other-sentinels\n2")) {
                            return false;
                        }
                    }
                    return true;
                });
                return s;
            } catch (RuntimeException e) {
                s.close();
                throw e;
            }
        }

        RedisProcess master() {
            for (RedisProcess sentinel : sentinels) {
                try {
                    String[] reply = cli(sentinel, "SENTINEL", "GET-MASTER-ADDR-BY-NAME", MASTER)
                            .strip()
                            .split("\n");
                    int port = Integer.parseInt(reply[1].strip());
                    for (RedisProcess p : data) {
                        if (p.port() == port) {
                            return p;
                        }
                    }
                } catch (RuntimeException tryNext) {
                    // a paused Sentinel does not answer
                }
            }
            throw new IllegalStateException("no Sentinel names a master");
        }

        @Override
        public String clientUri() {
            StringBuilder b = new StringBuilder("redis-sentinel://");
            for (int i = 0; i < sentinels.size(); i++) {
                b.append(i == 0 ? "" : ",").append(sentinels.get(i).address());
            }
            return b.append('#').append(MASTER).toString();
        }

        /**
         * With replica acknowledgements: without them a deposed master that still serves a holder's renewals
         * after the promotion (until Sentinel demotes it, or while partitioned with that holder) extends
         * what the holder believes past the new master's hold-back, and the told-first count fails (seen:
         * 180 ms, seed 10). docs/safety.md says so.
         */
        @Override
        public String workloadUri(long leaseMillis) {
            String uri = clientUri();
            int hash = uri.indexOf('#');
            return uri.substring(0, hash) + "?maxLease=" + leaseMillis + "ms&waitReplicas=1&waitTimeout=200ms"
                    + uri.substring(hash);
        }

        @Override
        public long marginMillis() {
            return 12_000;
        }

        @Override
        public Set<Fault> faults() {
            return EnumSet.of(Fault.KILL_STORE, Fault.PAUSE_STORE, Fault.FAILOVER);
        }

        @Override
        public Injection inject(Fault fault, Random random, long durationMillis) {
            RedisProcess master = master();
            return switch (fault) {
                case KILL_STORE -> killAndRestart(master, random, () -> {});
                case PAUSE_STORE -> pause(master);
                case FAILOVER -> {
                    cli(sentinels.get(random.nextInt(sentinels.size())), "SENTINEL", "FAILOVER", MASTER);
                    yield new Injection(master.address(), () -> {});
                }
                default -> throw new IllegalArgumentException(fault.id());
            };
        }

        @Override
        public long leftovers() {
            return countLeftovers(master());
        }

        @Override
        public void close() {
            sentinels.forEach(RedisProcess::close);
            data.forEach(RedisProcess::close);
        }
    }

    /** Redlock over three independent masters with {@code appendfsync always}; one is hit at a time. */
    /** Three masters; {@code clocks} step their wall clocks (one each), empty when there is no clock fault. */
    private record Redlock(List<RedisProcess> masters, List<SteppedClock> clocks) implements Store {
        /** Redlock offers no semaphore (a majority per permit is not safe; see dlock-redlock.md). */
        @Override
        public List<String> locks() {
            return List.of("x", "rw");
        }

        @Override
        public String clientUri() {
            StringBuilder b = new StringBuilder("redlock://");
            for (int i = 0; i < masters.size(); i++) {
                b.append(i == 0 ? "" : ",").append(masters.get(i).address());
            }
            return b.toString();
        }

        @Override
        public String workloadUri(long leaseMillis) {
            return clientUri() + "?maxLease=" + leaseMillis + "ms";
        }

        @Override
        public long marginMillis() {
            return clocks.isEmpty() ? 8_000 : 10_000;
        }

        @Override
        public Set<Fault> faults() {
            Set<Fault> set = EnumSet.of(Fault.KILL_STORE, Fault.PAUSE_STORE);
            if (!clocks.isEmpty()) {
                set.add(Fault.CLOCK_STORE);
            }
            return set;
        }

        @Override
        public Injection inject(Fault fault, Random random, long durationMillis) {
            int i = random.nextInt(masters.size());
            RedisProcess node = masters.get(i);
            return switch (fault) {
                case KILL_STORE -> killAndRestart(node, random, () -> {});
                case PAUSE_STORE -> pause(node);
                case CLOCK_STORE -> stepClock(node, clocks.get(i), random);
                default -> throw new IllegalArgumentException(fault.id());
            };
        }

        @Override
        public long leftovers() {
            return masters.stream().mapToLong(RedisStores::countLeftovers).sum();
        }

        @Override
        public void close() {
            masters.forEach(RedisProcess::close);
        }
    }

    private static final class Cluster implements Store {
        private final List<RedisProcess> nodes = new ArrayList<>();

        static Cluster start(String host, Path dir) {
            Cluster c = new Cluster();
            try {
                for (int i = 0; i < 3; i++) {
                    c.nodes.add(RedisProcess.startOn(
                            host,
                            dir,
                            "--cluster-enabled",
                            "yes",
                            "--cluster-config-file",
                            "nodes.conf",
                            "--cluster-node-timeout",
                            "2000",
                            "--cluster-announce-ip",
                            host));
                }
                List<String> create = new ArrayList<>(List.of("redis-cli", "--cluster", "create"));
                c.nodes.forEach(n -> create.add(n.address()));
                create.addAll(List.of("--cluster-replicas", "0", "--cluster-yes"));
                Proc.run(60, create);
                c.awaitHealthy();
                return c;
            } catch (RuntimeException e) {
                c.close();
                throw e;
            }
        }

        void awaitHealthy() {
            Proc.await("the Cluster did not become healthy", 30, () -> nodes.stream()
                    .allMatch(n -> {
                        String info = cli(n, "CLUSTER", "INFO");
                        return info.contains("cluster_state:ok") && info.contains("cluster_known_nodes:3");
                    }));
        }

        @Override
        public String clientUri() {
            StringBuilder b = new StringBuilder("redis-cluster://");
            for (int i = 0; i < nodes.size(); i++) {
                b.append(i == 0 ? "" : ",").append(nodes.get(i).address());
            }
            return b.toString();
        }

        @Override
        public String workloadUri(long leaseMillis) {
            return clientUri() + "?maxLease=" + leaseMillis + "ms";
        }

        @Override
        public long marginMillis() {
            return 12_000;
        }

        @Override
        public Set<Fault> faults() {
            return EnumSet.of(Fault.KILL_STORE, Fault.PAUSE_STORE);
        }

        @Override
        public Injection inject(Fault fault, Random random, long durationMillis) {
            RedisProcess node = nodes.get(random.nextInt(nodes.size()));
            return switch (fault) {
                case KILL_STORE -> killAndRestart(node, random, () -> {});
                case PAUSE_STORE -> pause(node);
                default -> throw new IllegalArgumentException(fault.id());
            };
        }

        @Override
        public long leftovers() {
            return nodes.stream().mapToLong(RedisStores::countLeftovers).sum();
        }

        @Override
        public void close() {
            nodes.forEach(RedisProcess::close);
        }
    }
}
