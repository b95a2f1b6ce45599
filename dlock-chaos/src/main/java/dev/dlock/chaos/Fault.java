package dev.dlock.chaos;

import java.util.Arrays;
import java.util.Optional;

/**
 * The faults the nemesis can inject, by their command-line names. Client faults hit one client process
 * (or its network or clock); store faults hit the store's processes and are offered by the stores that
 * have them (see {@link Store#faults()}).
 */
enum Fault {
    /** SIGSTOP a client for 1.5 to 3 lease times, then SIGCONT. */
    PAUSE_CLIENT("pause-client", true),
    /** SIGKILL a client; a new process with the same id starts a moment later. */
    KILL_CLIENT("kill-client", true),
    /** Cut one client off the store (not from the resource) for 1.5 to 3 lease times. */
    PARTITION("partition", true),
    /** Step one client's clock forward or back by 2 to 4 lease times (libfaketime), then back. */
    CLOCK_CLIENT("clock-client", true),
    /** SIGKILL a store process and restart it with its files. */
    KILL_STORE("kill-store", false),
    /** SIGSTOP a store process for a while. */
    PAUSE_STORE("pause-store", false),
    /** Graceful stop and start of the database server. */
    RESTART_STORE("restart-store", false),
    /** SENTINEL FAILOVER: the Sentinels promote a replica. */
    FAILOVER("failover", false),
    /** Kill the leader (ZooKeeper, etcd) and restart it. */
    LEADER_KILL("leader-kill", false),
    /** Kill two of the three servers (ZooKeeper, etcd), then restart them. */
    QUORUM_LOSS("quorum-loss", false),
    /** Step the store's clock forward or back (libfaketime), then back. */
    CLOCK_STORE("clock-store", false);

    private final String id;
    private final boolean client;

    Fault(String id, boolean client) {
        this.id = id;
        this.client = client;
    }

    String id() {
        return id;
    }

    boolean onClient() {
        return client;
    }

    static Optional<Fault> byId(String id) {
        return Arrays.stream(values()).filter(f -> f.id.equals(id)).findFirst();
    }
}
