package dev.dlock.bench;

import java.util.concurrent.locks.Lock;
import org.springframework.data.redis.connection.RedisStandaloneConfiguration;
import org.springframework.data.redis.connection.lettuce.LettuceConnectionFactory;
import org.springframework.integration.redis.util.RedisLockRegistry;
import org.springframework.scheduling.concurrent.ThreadPoolTaskScheduler;

/**
 * Spring Integration's {@code RedisLockRegistry} in spin mode (retry every 100 ms, the default idle) or
 * pub/sub mode (wait for an unlock message), one registry and one Lettuce connection factory per bench
 * client, default expiry (60 s). Renewal is Spring's optional renewal task scheduler, switched on only
 * when a scenario asks for renewal (the held one); by default Spring does not renew.
 *
 * <p>Failure modes: {@link Client#close()} destroys the registry, the scheduler and the connection
 * factory, in that order.
 */
final class SpringRedisSystem implements LockSystem {
    private static final String REGISTRY_KEY = "dlock-bench-si";

    private final boolean pubSub;

    SpringRedisSystem(boolean pubSub) {
        this.pubSub = pubSub;
    }

    @Override
    public String name() {
        return pubSub ? "spring-redis-pubsub" : "spring-redis-spin";
    }

    @Override
    public String backend() {
        return "redis";
    }

    /** The held scenario runs the pub/sub mode only: both modes renew through the same scheduler. */
    @Override
    public boolean supports(Scenario scenario) {
        return scenario != Scenario.HELD || pubSub;
    }

    @Override
    public String unavailableReason(Endpoints endpoints) {
        return Probes.tcp(endpoints.redis());
    }

    @Override
    public Client open(Endpoints endpoints, int threads, boolean renewal) {
        LettuceConnectionFactory connections = new LettuceConnectionFactory(new RedisStandaloneConfiguration(
                endpoints.redis().host(), endpoints.redis().port()));
        connections.afterPropertiesSet();
        connections.start();
        RedisLockRegistry registry = new RedisLockRegistry(connections, REGISTRY_KEY);
        registry.setRedisLockType(
                pubSub ? RedisLockRegistry.RedisLockType.PUB_SUB_LOCK : RedisLockRegistry.RedisLockType.SPIN_LOCK);
        ThreadPoolTaskScheduler scheduler;
        if (renewal) {
            scheduler = new ThreadPoolTaskScheduler();
            scheduler.setThreadNamePrefix("si-renewal-");
            scheduler.initialize();
            registry.setRenewalTaskScheduler(scheduler);
        } else {
            scheduler = null;
        }
        return new Client() {
            @Override
            public BenchLock lock(String name) {
                Lock lock = registry.obtain(name);
                return BenchLock.of(lock);
            }

            @Override
            public void close() {
                try {
                    registry.destroy();
                } finally {
                    if (scheduler != null) {
                        scheduler.shutdown();
                    }
                    connections.destroy();
                }
            }
        };
    }
}
