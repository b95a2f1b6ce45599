package dev.dlock.redis;

import java.util.ArrayList;
import java.util.List;
import java.util.concurrent.TimeUnit;

/** One master, one replica and three Sentinels (quorum 2), all on free ports, for failover tests. */
final class RedisSentinelServers implements AutoCloseable {
    static final String MASTER_NAME = "dlockmaster";

    private final RedisServer master;
    private final RedisServer replica;
    private final List<RedisServer> sentinels = new ArrayList<>();

    private RedisSentinelServers(RedisServer master, RedisServer replica) {
        this.master = master;
        this.replica = replica;
    }

    static RedisSentinelServers start() {
        RedisServer master = RedisServer.start();
        RedisServer replica;
        try {
            replica = RedisServer.start("--replicaof", "127.0.0.1", Integer.toString(master.port()));
        } catch (RuntimeException e) {
            master.close();
            throw e;
        }
        RedisSentinelServers servers = new RedisSentinelServers(master, replica);
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
        await("the replica did not sync", () -> ((String) replica.call("INFO", "replication"))
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

    /** The Sentinel URI in Lettuce's syntax. */
    String uri() {
        StringBuilder b = new StringBuilder("redis-sentinel://");
        for (int i = 0; i < sentinels.size(); i++) {
            b.append(i == 0 ? "" : ",")
                    .append("127.0.0.1:")
                    .append(sentinels.get(i).port());
        }
        return b.append('#').append(MASTER_NAME).toString();
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
        master.close();
    }
}
