package dev.dlock.bench;

import java.util.Locale;

/**
 * The workloads every system runs. Each is a loop of lock, critical section, unlock; the critical section
 * increments a plain shared counter and checks that nobody else is inside.
 *
 * <p>{@code clients} is how many independent client instances (each with its own connections, as separate
 * application instances would have) take part; {@code threads} is the number of threads per client.
 */
enum Scenario {
    /** One client, one thread, its own name: the cost of one uncontended lock/unlock cycle. */
    UNCONTENDED(1, 1, "1 client x 1 thread, its own name"),
    /** One client, eight threads, each its own name: how well one client multiplexes independent locks. */
    DISTINCT(1, 8, "1 client x 8 threads, each its own name"),
    /** Four clients of four threads each on one name. */
    CONTENDED(4, 4, "4 clients x 4 threads, one name"),
    /** Eight clients queue on one name; latency from a release to the next holder's entry. */
    HANDOFF(8, 1, "8 clients wait on one name; release -> next holder's entry"),
    /** One client holds many leases with renewal on: heap, threads and store commands per second. */
    HELD(1, 1, "1 client holds N leases with renewal on");

    final int clients;
    final int threads;
    final String description;

    Scenario(int clients, int threads, String description) {
        this.clients = clients;
        this.threads = threads;
        this.description = description;
    }

    /** The name used on the command line and in the results. */
    String label() {
        return name().toLowerCase(Locale.ROOT);
    }

    static Scenario parse(String label) {
        for (Scenario s : values()) {
            if (s.label().equals(label.trim().toLowerCase(Locale.ROOT))) {
                return s;
            }
        }
        throw new IllegalArgumentException(
                "unknown scenario '" + label + "'; known: uncontended, distinct, contended," + " handoff, held");
    }
}
