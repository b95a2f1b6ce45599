package dev.dlock.bench;

import java.util.concurrent.TimeUnit;
import org.redisson.Redisson;
import org.redisson.api.RLock;
import org.redisson.api.RedissonClient;
import org.redisson.config.Config;

/**
 * Redisson's {@code RLock} (non-fair) or {@code RFairLock}, one {@code RedissonClient} per bench client,
 * default configuration (connection pool, Netty threads, 30 s watchdog renewal for locks taken without a
 * lease time) apart from the address.
 *
 * <p>Failure modes: {@code RedissonClient.shutdown} is told not to wait for a quiet period, so closing a
 * client takes milliseconds rather than seconds; it changes nothing while measuring.
 */
final class RedissonSystem implements LockSystem {
    private static final String PREFIX = "dlock-bench:redisson:";

    private final boolean fair;

    RedissonSystem(boolean fair) {
        this.fair = fair;
    }

    @Override
    public String name() {
        return fair ? "redisson-fair" : "redisson-lock";
    }

    @Override
    public String backend() {
        return "redis";
    }

    /** The held scenario runs {@code RLock} only: the fair lock renews through the same watchdog. */
    @Override
    public boolean supports(Scenario scenario) {
        return scenario != Scenario.HELD || !fair;
    }

    @Override
    public String unavailableReason(Endpoints endpoints) {
        return Probes.tcp(endpoints.redis());
    }

    @Override
    public Client open(Endpoints endpoints, int threads, boolean renewal) {
        Config config = new Config();
        config.useSingleServer().setAddress("redis://" + endpoints.redis());
        RedissonClient redisson = Redisson.create(config);
        return new Client() {
            @Override
            public BenchLock lock(String name) {
                RLock lock = fair ? redisson.getFairLock(PREFIX + name) : redisson.getLock(PREFIX + name);
                return BenchLock.of(lock);
            }

            @Override
            public void close() {
                redisson.shutdown(0, 5, TimeUnit.SECONDS);
            }
        };
    }
}
