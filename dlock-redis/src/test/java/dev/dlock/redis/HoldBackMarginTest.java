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
 * The hold-back's drift margin reaches the scripts only as an acquire argument beside the max lease
 * ({@link HoldBack#scriptArgs()}, computed by {@code DriftMargin}, the one definition): both scripts hold
 * grants back for the max lease plus the margin they are sent, and refuse a hold-back call without one.
 */
class HoldBackMarginTest {
    private static RedisServer server;

    @BeforeAll
    static void start() {
        server = RedisServer.start();
    }

    @AfterAll
    static void stop() {
        server.close();
    }

    /** An exclusive acquire on a namespace no grant was made in, with the hold-back's arguments. */
    private static Object exclusive(String namespace, String... holdBack) {
        ResourceKeys keys = ResourceKeys.of(new LockKey(namespace, "job", Mode.EXCLUSIVE));
        List<String> command = new ArrayList<>(List.of("EVAL", LuaScript.EXCLUSIVE.body(), "4"));
        command.addAll(List.of(keys.exclusiveAcquire()));
        command.add(ResourceKeys.epoch(namespace));
        command.addAll(List.of("acquire", "owner-" + System.nanoTime(), "60000", "0", "job", "16"));
        command.addAll(List.of(holdBack));
        return server.call(command.toArray(String[]::new));
    }

    /** A write acquire on a namespace no grant was made in, with the hold-back's arguments. */
    private static Object general(String namespace, String... holdBack) {
        ResourceKeys keys = ResourceKeys.of(new LockKey(namespace, "job", Mode.WRITE));
        List<String> command = new ArrayList<>(List.of("EVAL", LuaScript.DLOCK.body(), "6"));
        command.addAll(List.of(keys.withTokens()));
        command.add(ResourceKeys.epoch(namespace));
        command.addAll(List.of("acquire", "owner-" + System.nanoTime(), "W", "60000", "1", "0", "", "job", "16"));
        command.addAll(List.of(holdBack));
        return server.call(command.toArray(String[]::new));
    }

    /** The milliseconds a busy reply says grants stay held back. */
    private static long heldBackMillis(Object reply) {
        long value = (Long) reply;
        assertThat(value).as("a held-back reply").isLessThanOrEqualTo(-HoldBack.HELD_BACK - 1);
        return -value - HoldBack.HELD_BACK - 1;
    }

    /** The milliseconds grants stay held back after a reply: 0 for a grant (a token). */
    private static long heldBackOrZero(Object reply) {
        return (Long) reply > 0 ? 0 : heldBackMillis(reply);
    }

    @Test
    void grantsWaitForTheMaxLeasePlusTheMarginSent() {
        // The server never replicated: a namespace's first grant waits until its start (rounded up to the
        // next second) + max lease + margin. With a 1 ms max lease, that is at most a second away with no
        // margin, and a minute away with a 60 s margin.
        String namespace = "margin" + System.nanoTime();
        assertThat(heldBackMillis(exclusive(namespace + "e", "1", "60000"))).isBetween(59_000L, 61_002L);
        assertThat(heldBackMillis(general(namespace + "g", "1", "60000"))).isBetween(59_000L, 61_002L);
        assertThat(heldBackOrZero(exclusive(namespace + "e0", "1", "0"))).isLessThanOrEqualTo(1_002L);
        assertThat(heldBackOrZero(general(namespace + "g0", "1", "0"))).isLessThanOrEqualTo(1_002L);
    }

    @Test
    void bothScriptsRefuseAHoldBackWithoutAValidMargin() {
        for (String[] bad : List.of(new String[] {"1000"}, new String[] {"1000", "x"}, new String[] {"1000", "-1"})) {
            String namespace = "bad" + System.nanoTime();
            assertThatThrownBy(() -> exclusive(namespace, bad))
                    .as("exclusive.lua with %s", List.of(bad))
                    .hasMessageContaining("the hold-back needs the max lease and its drift margin");
            assertThatThrownBy(() -> general(namespace, bad))
                    .as("dlock.lua with %s", List.of(bad))
                    .hasMessageContaining("the hold-back needs the max lease and its drift margin");
        }
    }

    @Test
    void theClientSendsItsMaxLeaseAndTheMarginOfIt() {
        assertThat(HoldBack.DEFAULT
                        .withMaxLease(java.time.Duration.ofSeconds(30))
                        .scriptArgs())
                .containsExactly("30000", "302");
        assertThat(HoldBack.DEFAULT
                        .withMaxLease(java.time.Duration.ofMillis(150))
                        .scriptArgs())
                .containsExactly("150", "3");
    }
}
