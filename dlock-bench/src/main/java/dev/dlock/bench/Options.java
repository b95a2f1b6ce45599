package dev.dlock.bench;

import java.nio.file.Path;
import java.time.Duration;
import java.util.ArrayList;
import java.util.EnumSet;
import java.util.List;
import java.util.Set;

/**
 * The command line of {@link Main}, parsed and validated.
 *
 * @param quick every cell briefly (the smoke test)
 * @param scenarios the scenarios to run, in their natural order
 * @param systems filters on {@code name} or {@code name@backend}; empty for all
 * @param backends filters on the backend; empty for all
 * @param warmup warm-up before each measured round of a cell
 * @param measure the measuring time of one cell, split over the rounds
 * @param rounds how many times the systems of a scenario are interleaved
 * @param heldLeases how many leases the held scenario holds
 * @param held how long the held scenario holds them
 * @param out where results are written
 * @param endpoints Redis, PostgreSQL and MariaDB addresses (ZooKeeper is started in-process)
 * @param list print the systems and scenarios and exit
 */
record Options(
        boolean quick,
        Set<Scenario> scenarios,
        List<String> systems,
        List<String> backends,
        Duration warmup,
        Duration measure,
        int rounds,
        int heldLeases,
        Duration held,
        Path out,
        Endpoints endpoints,
        boolean list) {

    static final String USAGE = String.join(
            "\n",
            "usage: scripts/bench.sh [--quick] [--scenario NAME]... [--system NAME]... [--backend NAME]...",
            "                        [--warmup SECONDS] [--measure SECONDS] [--rounds N]",
            "                        [--held-leases N] [--held-seconds SECONDS] [--out DIR]",
            "                        [--redis HOST:PORT] [--postgres HOST:PORT] [--mariadb HOST:PORT] [--list]",
            "",
            "  --quick            every cell briefly (whole run under 2 minutes): warm-up 0.1 s, 0.5 s measured,",
            "                     1 round, held: 100 leases for 0.5 s",
            "  --scenario NAME    uncontended, distinct, contended, handoff, held (repeatable, or comma-separated)",
            "  --system NAME      a system (dlock, redisson-lock, redisson-fair, spring-redis-spin,",
            "                     spring-redis-pubsub, spring-jdbc, curator, jetcd-lock, raw) or SYSTEM@BACKEND",
            "  --backend NAME     redis, zookeeper, postgresql, mariadb, etcd, mem, redlock (3 local masters)",
            "  --warmup SECONDS   warm-up before each measured round (default 2)",
            "  --measure SECONDS  measured time per cell, split over the rounds (default 9)",
            "  --rounds N         rounds; each round runs every system once, interleaved (default 3)",
            "  --held-leases N    leases held in the held scenario (default 10000)",
            "  --held-seconds S   how long they are held (default 60)",
            "  --out DIR          output directory (default target/bench)",
            "  --list             list systems and scenarios, then exit");

    /**
     * Parses arguments.
     *
     * @throws IllegalArgumentException naming the bad argument
     */
    static Options parse(String... args) {
        boolean quick = false;
        boolean list = false;
        EnumSet<Scenario> scenarios = EnumSet.noneOf(Scenario.class);
        List<String> systems = new ArrayList<>();
        List<String> backends = new ArrayList<>();
        Double warmup = null;
        Double measure = null;
        Integer rounds = null;
        Integer heldLeases = null;
        Double heldSeconds = null;
        Path out = Path.of("target", "bench");
        Endpoints.HostPort redis = new Endpoints.HostPort("127.0.0.1", 6379);
        Endpoints.HostPort postgres = new Endpoints.HostPort("127.0.0.1", 5432);
        Endpoints.HostPort mariadb = new Endpoints.HostPort("127.0.0.1", 3306);
        for (int i = 0; i < args.length; i++) {
            String arg = args[i];
            switch (arg) {
                case "--quick" -> quick = true;
                case "--list" -> list = true;
                case "--scenario" -> {
                    for (String s : value(args, ++i, arg).split(",")) {
                        scenarios.add(Scenario.parse(s));
                    }
                }
                case "--system" -> systems.addAll(List.of(value(args, ++i, arg).split(",")));
                case "--backend" ->
                    backends.addAll(List.of(value(args, ++i, arg).split(",")));
                case "--warmup" -> warmup = seconds(value(args, ++i, arg), arg, true);
                case "--measure" -> measure = seconds(value(args, ++i, arg), arg, false);
                case "--rounds" -> rounds = positive(value(args, ++i, arg), arg);
                case "--held-leases" -> heldLeases = positive(value(args, ++i, arg), arg);
                case "--held-seconds" -> heldSeconds = seconds(value(args, ++i, arg), arg, false);
                case "--out" -> out = Path.of(value(args, ++i, arg));
                case "--redis" -> redis = Endpoints.HostPort.parse(value(args, ++i, arg));
                case "--postgres" -> postgres = Endpoints.HostPort.parse(value(args, ++i, arg));
                case "--mariadb" -> mariadb = Endpoints.HostPort.parse(value(args, ++i, arg));
                default -> throw new IllegalArgumentException("unknown argument '" + arg + "'\n" + USAGE);
            }
        }
        if (scenarios.isEmpty()) {
            scenarios = EnumSet.allOf(Scenario.class);
        }
        return new Options(
                quick,
                scenarios,
                List.copyOf(systems),
                List.copyOf(backends),
                duration(warmup != null ? warmup : quick ? 0.1 : 2),
                duration(measure != null ? measure : quick ? 0.5 : 9),
                rounds != null ? rounds : quick ? 1 : 3,
                heldLeases != null ? heldLeases : quick ? 100 : 10_000,
                duration(heldSeconds != null ? heldSeconds : quick ? 0.5 : 60),
                out,
                new Endpoints(redis, null, postgres, mariadb, null, null),
                list);
    }

    /** Whether the filters select a system. */
    boolean selects(LockSystem system) {
        boolean bySystem =
                systems.isEmpty() || systems.stream().anyMatch(s -> s.equals(system.name()) || s.equals(system.id()));
        boolean byBackend = backends.isEmpty() || backends.contains(system.backend());
        return bySystem && byBackend;
    }

    private static String value(String[] args, int i, String option) {
        if (i >= args.length || args[i].startsWith("--")) {
            throw new IllegalArgumentException(option + " needs a value");
        }
        return args[i];
    }

    private static double seconds(String text, String option, boolean zeroAllowed) {
        double s;
        try {
            s = Double.parseDouble(text);
        } catch (NumberFormatException e) {
            throw new IllegalArgumentException(option + " expects seconds, got '" + text + "'");
        }
        if (Double.isNaN(s) || s < 0 || (!zeroAllowed && s == 0) || s > 86_400) {
            throw new IllegalArgumentException(
                    option + " must be " + (zeroAllowed ? "0" : "more than 0") + " to 86400 seconds, got " + text);
        }
        return s;
    }

    private static int positive(String text, String option) {
        try {
            int n = Integer.parseInt(text);
            if (n < 1) {
                throw new IllegalArgumentException(option + " must be at least 1, got " + n);
            }
            return n;
        } catch (NumberFormatException e) {
            throw new IllegalArgumentException(option + " expects a whole number, got '" + text + "'");
        }
    }

    private static Duration duration(double seconds) {
        return Duration.ofNanos(Math.round(seconds * 1e9));
    }
}
