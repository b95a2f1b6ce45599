package dev.dlock.redis;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;

import dev.dlock.spi.LockKey;
import dev.dlock.spi.Mode;
import java.util.ArrayList;
import java.util.List;
import org.junit.jupiter.api.AfterAll;
import org.junit.jupiter.api.BeforeAll;
import org.junit.jupiter.api.Test;

/**
 * The token block reaches the scripts only as an acquire argument ({@link RedisBackend#TOKEN_BLOCK}, the
 * one definition): both scripts step the counter by the block they are sent, and an acquire sent without
 * one, or with an invalid one, fails loudly instead of granting.
 */
class TokenBlockTest {
    private static RedisServer server;

    @BeforeAll
    static void start() {
        server = RedisServer.start();
    }

    @AfterAll
    static void stop() {
        server.close();
    }

    /** An exclusive acquire of {@code name} by a fresh owner, without the hold-back's arguments. */
    private static Object exclusive(String name, String... block) {
        ResourceKeys keys = ResourceKeys.of(new LockKey("blocks", name, Mode.EXCLUSIVE));
        List<String> command = new ArrayList<>(List.of("EVAL", LuaScript.EXCLUSIVE.body(), "3"));
        command.addAll(List.of(keys.exclusiveAcquire()));
        command.addAll(List.of("acquire", "owner-" + System.nanoTime(), "60000", "0", name));
        command.addAll(List.of(block));
        return server.call(command.toArray(String[]::new));
    }

    /** A write acquire of {@code name} by a fresh owner, without the hold-back's arguments. */
    private static Object general(String name, String... block) {
        ResourceKeys keys = ResourceKeys.of(new LockKey("blocks", name, Mode.WRITE));
        List<String> command = new ArrayList<>(List.of("EVAL", LuaScript.DLOCK.body(), "5"));
        command.addAll(List.of(keys.withTokens()));
        command.addAll(List.of("acquire", "owner-" + System.nanoTime(), "W", "60000", "1", "0", "", name));
        command.addAll(List.of(block));
        return server.call(command.toArray(String[]::new));
    }

    @Test
    void bothScriptsRefuseAnAcquireWithoutAValidTokenBlock() {
        for (String[] bad : List.of(
                new String[0], new String[] {""}, new String[] {"0"}, new String[] {"1.5"}, new String[] {"x"})) {
            assertThatThrownBy(() -> exclusive("e-" + bad.length, bad))
                    .as("exclusive.lua with %s", List.of(bad))
                    .hasMessageContaining("acquire needs the token block");
            assertThatThrownBy(() -> general("g-" + bad.length, bad))
                    .as("dlock.lua with %s", List.of(bad))
                    .hasMessageContaining("acquire needs the token block");
        }
        ResourceKeys exclusiveKeys = ResourceKeys.of(new LockKey("blocks", "e-0", Mode.EXCLUSIVE));
        assertThat(server.call("EXISTS", exclusiveKeys.holders()))
                .as("nothing granted")
                .isEqualTo(0L);
    }

    @Test
    void bothScriptsStepTheCounterByTheBlockTheyAreSent() {
        for (String block : List.of("16", "1000")) {
            String name = "step-" + block;
            ResourceKeys keys = ResourceKeys.of(new LockKey("blocks", name, Mode.EXCLUSIVE));
            // A counter far ahead of the server clock: the next token is the counter plus the block.
            String ahead = Long.toString(System.currentTimeMillis() * 1000 * 2);
            server.call("SET", keys.tokens(), ahead);
            assertThat(exclusive(name, block)).isEqualTo(Long.parseLong(ahead) + Long.parseLong(block));
            ResourceKeys writeKeys = ResourceKeys.of(new LockKey("blocks", "w-" + name, Mode.WRITE));
            server.call("SET", writeKeys.tokens(), ahead);
            assertThat(general("w-" + name, block)).isEqualTo(Long.parseLong(ahead) + Long.parseLong(block));
        }
    }
}
