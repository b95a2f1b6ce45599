package dev.dlock.redis;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;

import dev.dlock.LockBackendException;
import dev.dlock.LockClient;
import org.junit.jupiter.api.Test;

/** A server whose maxmemory-policy may evict lock keys is refused at connect, unless allowed. */
class EvictionCheckTest {
    @Test
    void evictingPoliciesAreRefusedWithTheSettingAndTheFix() {
        for (String policy : new String[] {"allkeys-lru", "volatile-ttl"}) {
            try (RedisServer server = RedisServer.start("--maxmemory-policy", policy)) {
                assertThatThrownBy(() -> LockClient.connect(server.uri()))
                        .isInstanceOf(LockBackendException.class)
                        .hasMessageContaining("maxmemory-policy '" + policy + "'")
                        .hasMessageContaining("noeviction")
                        .hasMessageContaining("allowEviction=true");
                try (LockClient client = LockClient.connect(server.uri() + "&allowEviction=true")) {
                    client.lock("a").tryAcquire().orElseThrow().close();
                }
                try (LockClient client = LockClient.builder(RedisBackends.builder(server.uri())
                                .allowEviction(true)
                                .build())
                        .build()) {
                    client.lock("a").tryAcquire().orElseThrow().close();
                }
            }
        }
    }

    @Test
    void theBuilderOverridesTheUrisOption() {
        try (RedisServer server = RedisServer.start("--maxmemory-policy", "allkeys-lru")) {
            assertThatThrownBy(() -> LockClient.builder(RedisBackends.builder(server.uri() + "&allowEviction=true")
                                    .allowEviction(false)
                                    .build())
                            .build())
                    .isInstanceOf(LockBackendException.class)
                    .hasMessageContaining("maxmemory-policy 'allkeys-lru'");
            String redlock = "redlock://127.0.0.1:" + server.port() + ",127.0.0.1:" + server.port() + ",127.0.0.1:"
                    + server.port() + "?allowEviction=true";
            assertThatThrownBy(() -> LockClient.builder(RedlockBackends.builder(redlock)
                                    .allowEviction(false)
                                    .build())
                            .build())
                    .isInstanceOf(LockBackendException.class)
                    .hasMessageContaining("maxmemory-policy 'allkeys-lru'");
        }
    }

    @Test
    void noevictionIsAccepted() {
        try (RedisServer server = RedisServer.start("--maxmemory-policy", "noeviction");
                LockClient client = LockClient.connect(server.uri())) {
            assertThat(client.lock("a").tryAcquire()).isPresent();
        }
    }

    @Test
    void aServerThatRefusesConfigGetIsAcceptedWithAWarning() {
        try (RedisServer server = RedisServer.start("--maxmemory-policy", "allkeys-lru")) {
            server.call("ACL", "SETUSER", "locker", "on", ">secret", "~*", "&*", "+@all", "-config");
            try (LockClient client = LockClient.connect(
                    "redis://locker:secret@127.0.0.1:" + server.port() + "?unsafeGrantAfterRestart=true")) {
                assertThat(client.lock("a").tryAcquire()).isPresent();
            }
        }
    }
}
