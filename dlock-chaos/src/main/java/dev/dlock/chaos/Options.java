package dev.dlock.chaos;

import java.nio.file.Path;
import java.util.ArrayList;
import java.util.EnumSet;
import java.util.List;
import java.util.Set;

/**
 * The command line of {@code scripts/chaos.sh}, parsed and checked.
 *
 * @param quick the CI mode: few faults per store, a time limit, 3 clients
 * @param stores the stores to run, in order
 * @param faults the faults the nemesis may inject
 * @param events fault events to inject per store
 * @param clients client processes per store (3 to 5)
 * @param leaseMillis the lease time the clients use
 * @param seed the random seed
 * @param out where the report goes
 */
record Options(
        boolean quick,
        List<String> stores,
        Set<Fault> faults,
        int events,
        int clients,
        long leaseMillis,
        long seed,
        Path out) {
    static final String USAGE = String.join(
            "\n",
            "usage: scripts/chaos.sh [--quick] [--store NAME]... [--fault NAME]... [--events N] [--clients N]",
            "                        [--seed N] [--out DIR]",
            "  --quick       CI mode: a few faults per store (default 4), 3 clients, at most 40 s of faults each",
            "  --store NAME  run only these stores (repeatable): " + String.join(", ", Stores.ALL.keySet()),
            "  --fault NAME  inject only these faults (repeatable): " + faultNames(),
            "  --events N    fault events per store, N > 0 (default 4 with --quick, else 1000)",
            "  --clients N   client processes per store, 3 to 5 (default 3 with --quick, else 5)",
            "  --seed N      random seed (default: the time)",
            "  --out DIR     report directory (default target/chaos)");

    private static String faultNames() {
        List<String> names = new ArrayList<>();
        for (Fault f : Fault.values()) {
            names.add(f.id());
        }
        return String.join(", ", names);
    }

    /** Thrown for bad input; its message says what is wrong. */
    static final class UsageException extends Exception {
        private static final long serialVersionUID = 1L;

        UsageException(String message) {
            super(message);
        }
    }

    static Options parse(String... args) throws UsageException {
        boolean quick = false;
        List<String> stores = new ArrayList<>();
        Set<Fault> faults = EnumSet.noneOf(Fault.class);
        Integer events = null;
        Integer clients = null;
        long seed = System.currentTimeMillis();
        Path out = Path.of("target", "chaos");
        for (int i = 0; i < args.length; i++) {
            String a = args[i];
            switch (a) {
                case "--quick" -> quick = true;
                case "--store" -> {
                    String s = value(args, ++i, a);
                    if (!Stores.ALL.containsKey(s)) {
                        throw new UsageException("unknown store '" + s + "'");
                    }
                    if (!stores.contains(s)) {
                        stores.add(s);
                    }
                }
                case "--fault" -> {
                    String f = value(args, ++i, a);
                    faults.add(Fault.byId(f).orElseThrow(() -> new UsageException("unknown fault '" + f + "'")));
                }
                case "--events" -> events = positive(value(args, ++i, a), a);
                case "--clients" -> {
                    clients = positive(value(args, ++i, a), a);
                    if (clients < 3 || clients > 5) {
                        throw new UsageException("--clients must be 3 to 5, not " + clients);
                    }
                }
                case "--seed" -> {
                    String s = value(args, ++i, a);
                    try {
                        seed = Long.parseLong(s);
                    } catch (NumberFormatException e) {
                        throw new UsageException("--seed needs a number, not '" + s + "'");
                    }
                }
                case "--out" -> out = Path.of(value(args, ++i, a));
                default -> throw new UsageException("unknown argument '" + a + "'");
            }
        }
        return new Options(
                quick,
                stores.isEmpty() ? List.copyOf(Stores.ALL.keySet()) : List.copyOf(stores),
                faults.isEmpty() ? EnumSet.allOf(Fault.class) : faults,
                events != null ? events : quick ? 4 : 1000,
                clients != null ? clients : quick ? 3 : 5,
                2000,
                seed,
                out);
    }

    private static String value(String[] args, int i, String flag) throws UsageException {
        if (i >= args.length) {
            throw new UsageException(flag + " needs a value");
        }
        return args[i];
    }

    private static int positive(String text, String flag) throws UsageException {
        try {
            int n = Integer.parseInt(text);
            if (n <= 0) {
                throw new UsageException(flag + " must be greater than 0, not " + n);
            }
            return n;
        } catch (NumberFormatException e) {
            throw new UsageException(flag + " needs a whole number, not '" + text + "'");
        }
    }
}
