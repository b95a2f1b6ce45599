package dev.dlock.bench;

import java.util.ArrayList;
import java.util.List;
import java.util.concurrent.TimeUnit;
import org.redisson.Redisson;
import org.redisson.RedissonMultiLock;
import org.redisson.RedissonRedLock;
import org.redisson.api.RLock;
import org.redisson.api.RedissonClient;
import org.redisson.config.Config;

/**
 * Redisson's locks over independent masters: {@code RedissonRedLock} (granted by a majority, deprecated
 * by Redisson) or {@code RedissonMultiLock} (every master must grant), built from one {@code RLock} per
 * master, with one {@code RedissonClient} per master and bench client, default configuration apart from
 * the address. Compared with dlock's {@code redlock://} on the same masters.
 *
 * <p>Not in the held scenario: its counting proxy stands in front of one server, not several.
 */
final class RedissonRedLockSystem implements LockSystem {
    private static final String PREFIX = "dlock-bench:redisson:";

    private final boolean all;

    RedissonRedLockSystem(boolean all) {
        this.all = all;
    }

    @Override
    public String name() {
        return all ? "redisson-multilock" : "redisson-redlock";
    }

    @Override
    public String backend() {
        return "redlock";
    }

    @Override
    public boolean supports(Scenario scenario) {
        return scenario != Scenario.HELD;
    }

    @Override
    public String unavailableReason(Endpoints endpoints) {
        if (endpoints.redlock() == null || endpoints.redlock().isEmpty()) {
            return "no Redlock masters";
        }
        for (Endpoints.HostPort master : endpoints.redlock()) {
            String reason = Probes.tcp(master);
            if (reason != null) {
                return reason;
            }
        }
        return null;
    }

    @Override
    public Client open(Endpoints endpoints, int threads, boolean renewal) {
        List<RedissonClient> clients = new ArrayList<>();
        for (Endpoints.HostPort master : endpoints.redlock()) {
            Config config = new Config();
            config.useSingleServer().setAddress("redis://" + master);
            clients.add(Redisson.create(config));
        }
        return new Client() {
            @Override
            @SuppressWarnings("deprecation") // RedissonRedLock: the comparison is with what people use
            public BenchLock lock(String name) {
                RLock[] parts =
                        clients.stream().map(c -> c.getLock(PREFIX + name)).toArray(RLock[]::new);
                return BenchLock.of(all ? new RedissonMultiLock(parts) : new RedissonRedLock(parts));
            }

            @Override
            public void close() {
                for (RedissonClient client : clients) {
                    client.shutdown(0, 5, TimeUnit.SECONDS);
                }
            }
        };
    }
}
