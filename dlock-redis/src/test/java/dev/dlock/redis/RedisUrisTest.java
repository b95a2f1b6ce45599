package dev.dlock.redis;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;

import dev.dlock.spi.LockBackendProvider;
import io.lettuce.core.RedisURI;
import java.time.Duration;
import java.util.ServiceLoader;
import org.junit.jupiter.api.Test;

class RedisUrisTest {
    @Test
    void standaloneWithAclUserDatabaseAndTls() {
        RedisUris.Parsed parsed = RedisUris.parse("rediss://app:pw@cache.example:6380/3?clientName=billing");
        assertThat(parsed.topology()).isEqualTo(RedisUris.Topology.STANDALONE);
        RedisURI uri = parsed.servers().get(0);
        assertThat(uri.getHost()).isEqualTo("cache.example");
        assertThat(uri.getPort()).isEqualTo(6380);
        assertThat(uri.getDatabase()).isEqualTo(3);
        assertThat(uri.isSsl()).isTrue();
        assertThat(uri.getUsername()).isEqualTo("app");
        assertThat(uri.getClientName()).isEqualTo("billing");
        assertThat(parsed.replicaAcks()).isZero();
    }

    @Test
    void sentinelInLettuceSyntax() {
        RedisUris.Parsed parsed = RedisUris.parse("redis-sentinel://s1:26379,s2:26380/1#mymaster");
        assertThat(parsed.topology()).isEqualTo(RedisUris.Topology.SENTINEL);
        RedisURI uri = parsed.servers().get(0);
        assertThat(uri.getSentinelMasterId()).isEqualTo("mymaster");
        assertThat(uri.getSentinels()).extracting(RedisURI::getHost).containsExactly("s1", "s2");
        assertThat(uri.getDatabase()).isEqualTo(1);
        assertThatThrownBy(() -> RedisUris.parse("redis-sentinel://s1:26379"))
                .isInstanceOf(IllegalArgumentException.class)
                .hasMessageContaining("master name");
    }

    @Test
    void clusterSeedsShareCredentialsAndTls() {
        RedisUris.Parsed parsed = RedisUris.parse("rediss-cluster://u:p@n1:7000,n2:7001,n3");
        assertThat(parsed.topology()).isEqualTo(RedisUris.Topology.CLUSTER);
        assertThat(parsed.servers()).extracting(RedisURI::getHost).containsExactly("n1", "n2", "n3");
        assertThat(parsed.servers()).extracting(RedisURI::getPort).containsExactly(7000, 7001, 6379);
        assertThat(parsed.servers()).allMatch(RedisURI::isSsl);
        assertThat(parsed.servers()).allMatch(u -> "u".equals(u.getUsername()));
        assertThatThrownBy(() -> RedisUris.parse("redis-cluster://n1:7000/2"))
                .isInstanceOf(IllegalArgumentException.class)
                .hasMessageContaining("database");
        assertThatThrownBy(() -> RedisUris.parse("redis-cluster://n1:7000,,n2"))
                .isInstanceOf(IllegalArgumentException.class)
                .hasMessageContaining("empty host");
    }

    @Test
    void replicaAcknowledgementOptions() {
        RedisUris.Parsed parsed = RedisUris.parse("redis://h?waitReplicas=2&waitTimeout=50ms&clientName=x");
        assertThat(parsed.replicaAcks()).isEqualTo(2);
        assertThat(parsed.replicaAckTimeout()).isEqualTo(Duration.ofMillis(50));
        assertThat(parsed.servers().get(0).getClientName()).isEqualTo("x");
        assertThat(RedisUris.parse("redis://h?waitReplicas=1&waitTimeout=1s").replicaAckTimeout())
                .isEqualTo(Duration.ofSeconds(1));
        assertThatThrownBy(() -> RedisUris.parse("redis://h?waitReplicas=1&waitTimeout=soon"))
                .isInstanceOf(IllegalArgumentException.class)
                .hasMessageContaining("waitTimeout");
    }

    @Test
    void badUrisNameTheProblemWithoutThePassword() {
        assertThatThrownBy(() -> RedisUris.parse("http://h"))
                .isInstanceOf(IllegalArgumentException.class)
                .hasMessageContaining("not a Redis URI");
        assertThatThrownBy(() -> RedisUris.parse("redis://user:topsecret@"))
                .isInstanceOf(IllegalArgumentException.class)
                .hasMessageContaining("invalid Redis URI")
                .hasMessageNotContaining("topsecret");
        assertThat(RedisUris.redact("redis://user:topsecret@h:1")).isEqualTo("redis://user:***@h:1");
        assertThat(RedisUris.redact("redis://topsecret@h:1")).isEqualTo("redis://***@h:1");
        assertThat(RedisUris.redact("redis://h:1")).isEqualTo("redis://h:1");
    }

    @Test
    void providerIsFoundByServiceLoaderForEveryScheme() {
        LockBackendProvider redis = null;
        for (LockBackendProvider provider : ServiceLoader.load(LockBackendProvider.class)) {
            if (provider instanceof RedisBackendProvider) {
                redis = provider;
            }
        }
        assertThat(redis).isNotNull();
        for (String scheme : RedisUris.SCHEMES) {
            assertThat(redis.accepts(scheme + "://h:1")).as(scheme).isTrue();
        }
        assertThat(redis.accepts("mem:")).isFalse();
        assertThat(redis.accepts("zookeeper://h")).isFalse();
        assertThat(redis.accepts(null)).isFalse();
    }
}
