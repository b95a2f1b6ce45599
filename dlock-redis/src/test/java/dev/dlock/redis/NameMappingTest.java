package dev.dlock.redis;

import static org.assertj.core.api.Assertions.assertThat;

import dev.dlock.Lease;
import dev.dlock.LockClient;
import dev.dlock.spi.LockKey;
import dev.dlock.spi.Mode;
import java.util.List;
import org.junit.jupiter.api.Test;

/**
 * Names reach the script only as data: a name that looks like Lua, like a Redis command or like another
 * lock's key touches nothing but its own lock.
 */
class NameMappingTest {
    @Test
    void hostileNamesOnlyEverTouchTheirOwnLock() {
        try (RedisServer server = RedisServer.start();
                LockClient client = LockClient.builder(server.uri()).build()) {
            Lease victim = client.lock("victim").tryAcquire().orElseThrow();
            ResourceKeys victimKeys = ResourceKeys.of(new LockKey("dlock", "victim", Mode.EXCLUSIVE));
            List<String> hostile = List.of(
                    "x') redis.call('FLUSHALL') --",
                    "]] redis.call('DEL', KEYS[1]) --[[",
                    victimKeys.holders(),
                    victimKeys.expiries(),
                    victimKeys.tokens(),
                    victimKeys.prefix(),
                    "victim\u0001",
                    "VICTIM");
            for (String name : hostile) {
                Lease lease = client.lock(name).tryAcquire().orElseThrow();
                assertThat(lease.name()).isEqualTo(name);
                lease.close();
                assertThat(client.forceRelease(name)).isFalse();
            }
            assertThat(victim.isValid()).isTrue();
            assertThat(client.describe("victim")).singleElement().satisfies(info -> assertThat(
                            info.holders().get(0).fencingToken())
                    .isEqualTo(victim.fencingToken()));
            assertThat(server.call("GET", victimKeys.tokens())).isEqualTo(Long.toString(victim.fencingToken()));
            // Every key the hostile names produced lives under the namespace, beside the victim's.
            List<?> keys = (List<?>) server.call("KEYS", "*");
            assertThat(keys).allSatisfy(k -> assertThat((String) k).startsWith("dlock:lock:{"));
            victim.close();
        }
    }
}
