package dev.dlock.redis;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;

import dev.dlock.Lease;
import dev.dlock.LockClient;
import dev.dlock.LockInfo;
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
    void clusterUrisDeclareTheMaxLeaseOfTheHoldBack() {
        RedisUris.Parsed parsed = RedisUris.parse("redis-cluster://n1:7000,n2?maxLease=45s");
        assertThat(RedisBackends.hold(parsed)).isEqualTo(new HoldBack(java.time.Duration.ofSeconds(45), false));
        assertThat(RedisBackends.hold(RedisUris.parse("redis-cluster://n1?unsafeGrantAfterRestart=true"))
                        .on())
                .isFalse();
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

    /**
     * Sentinel URIs have replica acknowledgements on by default (one replica, the default timeout, capped
     * at half the operation timeout); {@code waitReplicas=0} opts out; the other topologies stay off.
     */
    @Test
    void sentinelUrisWaitForOneReplicaByDefault() {
        RedisUris.Parsed sentinel = RedisUris.parse("redis-sentinel://s1:26379#m");
        assertThat(sentinel.replicaAcks()).isEqualTo(1);
        assertThat(sentinel.replicaAckTimeout()).as("the default").isNull();
        assertThat(ReplicaAcks.effectiveTimeout(null, Duration.ofSeconds(5))).isEqualTo(Duration.ofMillis(2500));
        assertThat(ReplicaAcks.effectiveTimeout(null, Duration.ofSeconds(1))).isEqualTo(Duration.ofMillis(500));
        assertThat(ReplicaAcks.effectiveTimeout(Duration.ofMillis(40), Duration.ofSeconds(5)))
                .isEqualTo(Duration.ofMillis(40));
        assertThat(RedisBackends.of("valkeys-sentinel://s1:26379#m").toString())
                .contains("replicaAcks=1 within the default");

        RedisUris.Parsed optedOut = RedisUris.parse("redis-sentinel://s1:26379?waitReplicas=0#m");
        assertThat(optedOut.replicaAcks()).isZero();
        assertThat(RedisBackends.of("redis-sentinel://s1:26379?waitReplicas=0#m")
                        .toString())
                .doesNotContain("replicaAcks");

        RedisUris.Parsed timeoutOnly = RedisUris.parse("redis-sentinel://s1:26379?waitTimeout=1s#m");
        assertThat(timeoutOnly.replicaAcks()).isEqualTo(1);
        assertThat(timeoutOnly.replicaAckTimeout()).isEqualTo(Duration.ofSeconds(1));
        RedisUris.Parsed two = RedisUris.parse("redis-sentinel://s1:26379?waitReplicas=2#m");
        assertThat(two.replicaAcks()).isEqualTo(2);
        assertThat(two.replicaAckTimeout()).isNull();

        assertThat(RedisUris.parse("redis://h").replicaAcks()).isZero();
        assertThat(RedisUris.parse("redis://h?waitReplicas=0").replicaAcks()).isZero();
        assertThat(RedisUris.parse("redis-cluster://n1:7000").replicaAcks()).isZero();
        assertThat(RedisUris.parse("redlock://a:1,b:2,c:3").replicaAcks()).isZero();
    }

    @Test
    void badReplicaAcknowledgementValuesNameTheProblem() {
        assertThatThrownBy(() -> RedisUris.parse("redis-sentinel://s1:26379?waitReplicas=-1#m"))
                .isInstanceOf(IllegalArgumentException.class)
                .hasMessageContaining("waitReplicas must be 0 (replica acknowledgements off) or a positive integer")
                .hasMessageContaining("'-1'");
        assertThatThrownBy(() -> RedisUris.parse("redis-sentinel://s1:26379?waitReplicas=one#m"))
                .isInstanceOf(IllegalArgumentException.class)
                .hasMessageContaining("waitReplicas must be 0");
        assertThatThrownBy(() -> RedisUris.parse("redis-sentinel://s1:26379?waitReplicas=0&waitTimeout=1s#m"))
                .isInstanceOf(IllegalArgumentException.class)
                .hasMessageContaining("waitTimeout has no effect with waitReplicas=0");
        assertThatThrownBy(() -> RedisUris.parse("redis-sentinel://s1:26379?waitTimeout=0ms#m"))
                .isInstanceOf(IllegalArgumentException.class)
                .hasMessageContaining("waitTimeout must be a positive duration");
        assertThatThrownBy(() -> LockClient.builder("redis-sentinel://127.0.0.1:1?waitTimeout=2s#m")
                        .operationTimeout(Duration.ofSeconds(1))
                        .build())
                .isInstanceOf(IllegalArgumentException.class)
                .hasMessageContaining("shorter than the operation timeout");
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
    void valkeySchemesReadAsTheirRedisTwins() {
        RedisURI plain = RedisUris.parse("valkey://app:pw@cache.example:6380/2")
                .servers()
                .get(0);
        assertThat(plain.getHost()).isEqualTo("cache.example");
        assertThat(plain.getPort()).isEqualTo(6380);
        assertThat(plain.getDatabase()).isEqualTo(2);
        assertThat(plain.isSsl()).isFalse();
        assertThat(RedisUris.parse("valkeys://h:1").servers().get(0).isSsl()).isTrue();
        assertThat(RedisUris.parse("valkey-sentinel://s1:26379#m").topology()).isEqualTo(RedisUris.Topology.SENTINEL);
        RedisUris.Parsed cluster = RedisUris.parse("valkeys-cluster://a:1,b:2");
        assertThat(cluster.topology()).isEqualTo(RedisUris.Topology.CLUSTER);
        assertThat(cluster.servers()).allMatch(RedisURI::isSsl).hasSize(2);
        assertThatThrownBy(() -> RedisUris.parse("valkey-redlock://h:1"))
                .isInstanceOf(IllegalArgumentException.class)
                .hasMessageContaining("not a Redis URI");
    }

    @Test
    void aValkeyUriLocksOnARealServer() {
        // No Valkey server in Debian 12: a redis-server stands in, as Valkey speaks the same protocol.
        try (RedisServer server = RedisServer.start();
                LockClient client = LockClient.builder(server.uri().replace("redis://", "valkey://"))
                        .build()) {
            try (Lease lease = client.lock("valkey").acquire()) {
                assertThat(lease.fencingToken()).isPositive();
                assertThat(client.list("")).extracting(LockInfo::name).containsExactly("valkey");
            }
        }
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
