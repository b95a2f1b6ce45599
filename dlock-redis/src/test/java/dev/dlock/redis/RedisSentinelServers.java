package dev.dlock.redis;

import dev.dlock.testsupport.TcpProxy;
import java.io.IOException;
import java.io.UncheckedIOException;
import java.util.ArrayList;
import java.util.List;
import java.util.concurrent.TimeUnit;

/**
 * One master, one replica and three Sentinels (quorum 2), all on free ports, for failover tests. The
 * replica replicates through a {@link TcpProxy} ({@link #replicationLink()}), so a test can make it miss
 * writes while everything else goes on; or, from {@link #startReplicatingDirectly()}, from the master's
 * own port (a Sentinel asked for a failover while the master runs "fixes" a replica that names another
 * master address than its own, and then finds no replica good to promote).
 */
final class RedisSentinelServers implements AutoCloseable {
    static final String MASTER_NAME = "dlockmaster";

    private final RedisServer master;
    private final TcpProxy link;
    private final RedisServer replica;
    private final List<RedisServer> sentinels = new ArrayList<>();

    private RedisSentinelServers(RedisServer master, TcpProxy link, RedisServer replica) {
        this.master = master;
        this.link = link;
        this.replica = replica;
    }

    static RedisSentinelServers start() {
        return start(true);
    }

    /** As {@link #start()}, with the replica replicating from the master's port (no replication link). */
    static RedisSentinelServers startReplicatingDirectly() {
        return start(false);
    }

    private static RedisSentinelServers start(boolean proxied) {
        RedisServer master = RedisServer.start();
        TcpProxy link = null;
        RedisServer replica;
        try {
            link = proxied ? TcpProxy.start("127.0.0.1", master.port()) : null;
            int replicationPort = proxied ? link.port() : master.port();
            replica = RedisServer.start("--replicaof", "127.0.0.1", Integer.toString(replicationPort));
        } catch (IOException | RuntimeException e) {
            if (link != null) {
                link.close();
            }
            master.close();
            throw e instanceof IOException io ? new UncheckedIOException(io) : (RuntimeException) e;
        }
        RedisSentinelServers servers = new RedisSentinelServers(master, link, replica);
        try {
            servers.awaitReplicaInSync();
            for (int i = 0; i < 3; i++) {
                servers.sentinels.add(RedisServer.sentinel(master.port(), MASTER_NAME));
            }
            servers.awaitSentinelsAgree();
            return servers;
        } catch (RuntimeException e) {
            servers.close();
            throw e;
        }
    }

    private void awaitReplicaInSync() {
        awaitInSync(replica);
    }

    private static void awaitInSync(RedisServer node) {
        await("the replica did not sync", () -> ((String) node.call("INFO", "replication"))
                .contains("master_link_status:up"));
    }

    /** Every Sentinel knows the replica and the other Sentinels, so a failover can be agreed. */
    private void awaitSentinelsAgree() {
        await("the Sentinels did not discover each other and the replica", () -> {
            for (RedisServer sentinel : sentinels) {
                List<?> masters = (List<?>) sentinel.call("SENTINEL", "MASTER", MASTER_NAME);
                String flat = masters.toString();
                if (!flat.contains("num-slaves, 1") || !flat.contains("num-other-sentinels, 2")) {
                    return false;
                }
            }
            return true;
        });
    }

    static void await(String failure, java.util.function.BooleanSupplier condition) {
        long deadline = System.nanoTime() + TimeUnit.SECONDS.toNanos(30);
        while (true) {
            try {
                if (condition.getAsBoolean()) {
                    return;
                }
            } catch (RuntimeException notYet) {
                // keep waiting
            }
            if (System.nanoTime() > deadline) {
                throw new IllegalStateException(failure);
            }
            RedisServer.sleep(50);
        }
    }

    RedisServer master() {
        return master;
    }

    RedisServer replica() {
        return replica;
    }

    /** The replica's replication connection to the master: {@code freeze()} makes it miss writes. */
    TcpProxy replicationLink() {
        if (link == null) {
            throw new IllegalStateException("started with direct replication: no replication link");
        }
        return link;
    }

    /** The Sentinel URI in Lettuce's syntax. */
    String uri() {
        // Without the hold-back: a failover reads as a lost state and would hold grants back for maxLease.
        return uri("?unsafeGrantAfterRestart=true");
    }

    /** The Sentinel URI with {@code query} (starting with {@code ?}). */
    String uri(String query) {
        StringBuilder b = new StringBuilder("redis-sentinel://");
        for (int i = 0; i < sentinels.size(); i++) {
            b.append(i == 0 ? "" : ",")
                    .append("127.0.0.1:")
                    .append(sentinels.get(i).port());
        }
        return b.append(query).append('#').append(MASTER_NAME).toString();
    }

    /** Kills the master and the replica (the Sentinels keep running and find no replica to promote). */
    void killDataNodes() {
        replica.kill();
        master.kill();
    }

    /**
     * Starts both data nodes again on their ports and returns once the replica is in sync (so that grants
     * waiting for its acknowledgement can be made). The node the Sentinels name as master starts first,
     * and the other only once every Sentinel sees that master up: a replica that comes back while the
     * master is still flagged down is promoted (down-after is 1 s), and the next restart, which starts
     * each node in its first role again, then left the two replicating from each other ("the replica did
     * not sync", seen once in a CI dry run). The roles are set explicitly for the same reason: Sentinel
     * rewrites a node's config file when it reconfigures it.
     */
    void restartDataNodes() {
        int masterPort = currentMasterPort();
        RedisServer current = master.port() == masterPort ? master : replica;
        RedisServer other = current == master ? replica : master;
        current.restart();
        current.call("REPLICAOF", "NO", "ONE");
        awaitSentinelsSeeMasterUp();
        other.restart();
        int replicationPort = current == master && link != null ? link.port() : current.port();
        other.call("REPLICAOF", "127.0.0.1", Integer.toString(replicationPort));
        awaitInSync(other);
    }

    private void awaitSentinelsSeeMasterUp() {
        await("the Sentinels did not see the restarted master up", () -> {
            for (RedisServer sentinel : sentinels) {
                List<?> fields = (List<?>) sentinel.call("SENTINEL", "MASTER", MASTER_NAME);
                int flags = fields.indexOf("flags");
                if (flags < 0 || !"master".equals(fields.get(flags + 1))) {
                    return false; // e.g. "master,s_down,o_down" or a failover in progress
                }
            }
            return true;
        });
    }

    /** Asks a Sentinel for a failover now ({@code SENTINEL FAILOVER}), with the master still running. */
    void forceFailover() {
        sentinels.get(0).call("SENTINEL", "FAILOVER", MASTER_NAME);
    }

    /** The log of the Sentinel {@link #forceFailover()} asks, for failure messages. */
    String sentinelLog() {
        return sentinels.get(0).log();
    }

    /** The port of the master the Sentinels currently name. */
    int currentMasterPort() {
        List<?> address = (List<?>) sentinels.get(0).call("SENTINEL", "GET-MASTER-ADDR-BY-NAME", MASTER_NAME);
        return Integer.parseInt((String) address.get(1));
    }

    @Override
    public void close() {
        sentinels.forEach(RedisServer::close);
        replica.close();
        if (link != null) {
            link.close();
        }
        master.close();
    }
}
