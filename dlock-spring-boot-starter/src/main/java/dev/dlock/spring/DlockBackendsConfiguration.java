package dev.dlock.spring;

import dev.dlock.jdbc.JdbcBackends;
import dev.dlock.redis.RedisBackends;
import dev.dlock.spi.LockBackendFactory;
import dev.dlock.zookeeper.ZooKeeperBackends;
import io.lettuce.core.AbstractRedisClient;
import io.lettuce.core.ClientOptions;
import io.lettuce.core.RedisClient;
import io.lettuce.core.cluster.RedisClusterClient;
import javax.sql.DataSource;
import org.apache.commons.logging.Log;
import org.apache.commons.logging.LogFactory;
import org.apache.curator.framework.CuratorFramework;
import org.springframework.beans.BeanWrapper;
import org.springframework.beans.PropertyAccessorFactory;
import org.springframework.boot.autoconfigure.condition.ConditionalOnClass;
import org.springframework.boot.autoconfigure.condition.ConditionalOnSingleCandidate;
import org.springframework.context.annotation.Bean;
import org.springframework.context.annotation.Configuration;
import org.springframework.data.redis.connection.lettuce.LettuceConnectionFactory;

/**
 * Offers the application's own store clients as {@link BackendCandidate}s, each when its dlock backend
 * module is on the class path: a Spring Data Redis {@link LettuceConnectionFactory} (dlock-redis), a
 * {@link DataSource} (dlock-jdbc), a {@link CuratorFramework} (dlock-zookeeper). {@link DlockStore} picks
 * one when {@code dlock.uri} is unset. Each nested configuration is guarded by class conditions, so none
 * of these libraries is needed at run time unless the application uses it.
 *
 * <p>Failure modes: a candidate opens nothing until it is chosen and its client connects; invalid
 * backend settings ({@code dlock.jdbc.*}, {@code dlock.redis.*}) fail the application's start. The
 * application's Redis client keeps its own options; one that queues commands while disconnected (Lettuce's
 * default) is used but warned about, as dlock-redis recommends rejecting them.
 */
@Configuration(proxyBeanMethods = false)
class DlockBackendsConfiguration {
    private static final Log log = LogFactory.getLog(DlockBackendsConfiguration.class);

    @Configuration(proxyBeanMethods = false)
    @ConditionalOnClass(
            name = {
                "dev.dlock.redis.RedisBackends",
                "org.springframework.data.redis.connection.lettuce.LettuceConnectionFactory"
            })
    @ConditionalOnSingleCandidate(LettuceConnectionFactory.class)
    static class RedisConnectionFactoryStore {
        @Bean
        BackendCandidate dlockRedisCandidate(LettuceConnectionFactory connections, DlockProperties properties) {
            DlockRedisProperties redis = properties.getRedis();
            LockBackendFactory factory = context -> {
                if (!connections.isRunning()) {
                    connections.start();
                }
                AbstractRedisClient client = connections.getNativeClient();
                if (client.getOptions().getDisconnectedBehavior()
                        != ClientOptions.DisconnectedBehavior.REJECT_COMMANDS) {
                    log.warn("dlock uses the application's Redis client, which queues commands while"
                            + " disconnected: lock commands are then sent late, after dlock gave up on them."
                            + " Define a LettuceClientOptionsBuilderCustomizer bean setting"
                            + " disconnectedBehavior(REJECT_COMMANDS), or give dlock its own client with"
                            + " dlock.uri");
                }
                RedisBackends.Builder backend = client instanceof RedisClusterClient cluster
                        ? RedisBackends.builder(cluster)
                        : RedisBackends.builder((RedisClient) client);
                if (redis.getReplicaAcks() > 0) {
                    backend.replicaAcks(redis.getReplicaAcks(), redis.getReplicaAckTimeout());
                }
                if (redis.getMaxLease() != null) {
                    backend.maxLease(redis.getMaxLease());
                }
                backend.unsafeGrantAfterRestart(redis.isUnsafeGrantAfterRestart());
                return backend.build().open(context);
            };
            return new BackendCandidate("redis", describe(connections), factory);
        }

        private static String describe(LettuceConnectionFactory connections) {
            String where;
            if (connections.isClusterAware()) {
                where = "Redis Cluster " + connections.getClusterConfiguration().getClusterNodes();
            } else if (connections.isRedisSentinelAware()) {
                where = "Redis master '"
                        + connections.getSentinelConfiguration().getMaster().getName() + "' of Sentinels "
                        + connections.getSentinelConfiguration().getSentinels();
            } else {
                where = "redis://" + connections.getHostName() + ":" + connections.getPort() + "/"
                        + connections.getDatabase();
            }
            return where + " (the application's LettuceConnectionFactory)";
        }
    }

    @Configuration(proxyBeanMethods = false)
    @ConditionalOnClass(name = "dev.dlock.jdbc.JdbcBackends")
    @ConditionalOnSingleCandidate(DataSource.class)
    static class DataSourceStore {
        @Bean
        BackendCandidate dlockJdbcCandidate(DataSource dataSource, DlockProperties properties) {
            DlockJdbcProperties jdbc = properties.getJdbc();
            LockBackendFactory factory = JdbcBackends.builder(dataSource)
                    .tablePrefix(jdbc.getTablePrefix())
                    .createTables(jdbc.isCreateTables())
                    .advisory(jdbc.isAdvisory())
                    .threads(jdbc.getThreads())
                    .build();
            return new BackendCandidate(
                    "jdbc",
                    url(dataSource) + " (the application's DataSource, tables " + jdbc.getTablePrefix() + "*)",
                    factory);
        }

        /**
         * The JDBC URL of the common pools and drivers' data sources (Hikari, Tomcat, DBCP2, PostgreSQL),
         * without its query (settings, and maybe a password).
         */
        private static String url(DataSource dataSource) {
            BeanWrapper properties = PropertyAccessorFactory.forBeanPropertyAccess(dataSource);
            for (String property : new String[] {"jdbcUrl", "url"}) {
                if (properties.isReadableProperty(property)
                        && properties.getPropertyValue(property) instanceof String url) {
                    int query = url.indexOf('?');
                    return DlockStore.mask(query < 0 ? url : url.substring(0, query));
                }
            }
            return dataSource.getClass().getSimpleName();
        }
    }

    @Configuration(proxyBeanMethods = false)
    @ConditionalOnClass(
            name = {"dev.dlock.zookeeper.ZooKeeperBackends", "org.apache.curator.framework.CuratorFramework"})
    @ConditionalOnSingleCandidate(CuratorFramework.class)
    static class CuratorStore {
        @Bean
        BackendCandidate dlockZooKeeperCandidate(CuratorFramework curator) {
            return new BackendCandidate(
                    "zookeeper",
                    "ZooKeeper " + curator.getZookeeperClient().getCurrentConnectionString()
                            + " (the application's CuratorFramework)",
                    ZooKeeperBackends.of(curator));
        }
    }
}
