package dev.dlock.chaos;

import java.util.Random;
import java.util.Set;

/**
 * A lock store the suite runs as its own processes: how clients reach it, which store faults it offers,
 * how to inject one, and what it still holds after the run.
 */
interface Store extends AutoCloseable {
    /** The URI clients connect with. */
    String clientUri();

    /**
     * The URI the workload's clients use: {@link #clientUri()} plus, where the store holds grants back
     * after it lost its state (Redis, Sentinel, Cluster, Redlock), the longest lease they declare, so that a
     * restart or failover holds grants back for the run's lease rather than the 30 s default.
     *
     * @param leaseMillis the lease time of the run's clients
     */
    default String workloadUri(long leaseMillis) {
        return clientUri();
    }

    /** The locks of the workload this store offers: {@code x}, {@code rw} and {@code sem} by default. */
    default java.util.List<String> locks() {
        return StoreRun.LOCKS;
    }

    /** The version of the store's server program, for the report, or null when the suite does not ask it. */
    default String serverVersion() {
        return null;
    }

    /** How long after a fault heals the store may take to grant again, beyond the lease time, in ms. */
    long marginMillis();

    /** The store faults this store offers. */
    Set<Fault> faults();

    /**
     * Injects a store fault.
     *
     * @param fault one of {@link #faults()}
     * @param random the run's random source
     * @param durationMillis how long the fault should last where it has a duration
     * @return what was hit and how to heal it
     */
    Injection inject(Fault fault, Random random, long durationMillis);

    /** Raw leftovers in the store after the run beyond what the design keeps (for example token counters). */
    long leftovers();

    /** Kills every process and deletes the data. */
    @Override
    void close();

    /**
     * A fault in effect.
     *
     * @param target what was hit, for the report
     * @param heal ends the fault; runs once
     */
    record Injection(String target, Runnable heal) {}
}
