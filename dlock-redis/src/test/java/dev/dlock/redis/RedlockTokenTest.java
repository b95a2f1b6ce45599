package dev.dlock.redis;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;

import dev.dlock.Lease;
import dev.dlock.LockBackendException;
import dev.dlock.LockClient;
import dev.dlock.spi.LockKey;
import dev.dlock.spi.Mode;
import java.time.Duration;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.TimeUnit;
import org.junit.jupiter.api.Test;

/**
 * Fencing tokens and the delayed-restart rule on 3 masters restarted without persistence (every
 * {@link RedisServer} runs without RDB or AOF, so a restart forgets everything).
 */
class RedlockTokenTest {
    @Test
    void tokensStrictlyIncreaseWhenAMasterWithTheHighestCounterLosesItsState() throws Exception {
        try (RedlockServers servers = new RedlockServers(3);
                LockClient client =
                        LockClient.builder(servers.uri()).namespace("tokens").build()) {
            // Master 0's counter runs far ahead of the clocks (as after a clock that ran fast): the grant
            // takes its token. Only the write-back keeps it once master 0 forgets its counter.
            String counter = counterKey("tokens");
            long ahead = runAhead(servers.get(0), counter);
            // With master 2 down the first grant's majority must include master 0 (a round is decided
            // as soon as a majority granted, so on a busy machine masters 1 and 2 could decide alone).
            servers.get(2).kill();
            long last;
            try (Lease lease = acquireWhenBack(client)) {
                last = lease.fencingToken();
            }
            assertThat(last).isGreaterThan(ahead);
            servers.get(2).restart();
            // Master 2 missed that grant's write-back: it lacks the token like a master that lost it.
            last = grantsUntilCaughtUp(client, servers.get(2), counter, last, "master 2 came back empty");
            for (int round = 0; round < 6; round++) {
                RedisServer restarted = servers.get(round % 3);
                restarted.restart();
                last = grantsUntilCaughtUp(
                        client, restarted, counter, last, "master " + round % 3 + " restarted without its data");
            }
        }
    }

    /**
     * Cohort hand-off over Redlock: the grant's token came from one master whose counter ran ahead. The hold
     * passes while masters 0 and 1 still hold it (a pass asked for after the last renewal is confirmed with
     * the store first, which a majority must answer), and takes the next token. Then that master is gone
     * and another client is granted by the other two: still a whole block above the grant, since the
     * write-back put the token on master 1, whose counter steps by the block. (Before passes were confirmed,
     * this case passed the hold after master 0 was killed, when only master 1 still held it: a pass the
     * store could not have confirmed.)
     */
    @Test
    void aPassTakesTheNextTokenAndALaterGrantWithoutTheMasterThatMadeTheTokenIsAboveItsRoom() throws Exception {
        try (RedlockServers servers = new RedlockServers(3);
                LockClient a = LockClient.builder(servers.uri())
                        .namespace("room")
                        .localHandoff(32, Duration.ofSeconds(30)) // outlasts the set-up below
                        .build();
                LockClient b =
                        LockClient.builder(servers.uri()).namespace("room").build()) {
            String counter = counterKey("room");
            long ahead = runAhead(servers.get(0), counter);
            servers.get(2).kill(); // the grant's majority is masters 0 and 1
            Lease first = acquireWhenBack(a);
            assertThat(first.fencingToken()).as("master 0's token").isGreaterThan(ahead);
            assertThat(counterOf(servers.get(1), counter))
                    .as("written back to master 1")
                    .isEqualTo(first.fencingToken());
            servers.get(2).restart();
            CompletableFuture<Lease> second = a.lock("t").acquireAsync(Duration.ofSeconds(30));
            Thread.sleep(300); // waits behind the hold in a's local queue

            first.close(); // confirmed by masters 0 and 1, which hold it: passed
            Lease passed = second.get(10, TimeUnit.SECONDS);
            assertThat(passed.fencingToken())
                    .as("passed without a new grant: the grant's token + 1")
                    .isEqualTo(first.fencingToken() + 1);
            passed.close();

            servers.get(0).kill();
            grantedOnceByMasters1And2(a, "probe-a");
            grantedOnceByMasters1And2(b, "probe-b");
            try (Lease granted = b.lock("t").acquire(Duration.ofSeconds(15))) {
                assertThat(granted.fencingToken())
                        .as("granted by masters 1 and 2 without master 0: above the grant's whole block")
                        .isGreaterThanOrEqualTo(first.fencingToken() + RedisBackend.TOKEN_BLOCK);
            }
        }
    }

    /** The fencing counter key of the lock {@code t} in {@code namespace}. */
    private static String counterKey(String namespace) {
        return ResourceKeys.of(new LockKey(namespace, "t", Mode.EXCLUSIVE)).tokens();
    }

    /** Sets the counter on one master far ahead of the clock-based tokens; returns the value set. */
    private static long runAhead(RedisServer master, String counter) {
        long ahead = System.currentTimeMillis() * 1000 + 1_000_000_000_000L;
        master.call("SET", counter, Long.toString(ahead));
        return ahead;
    }

    /** Waits until the client has reconnected to master 2, so that masters 1 and 2 grant it. */
    private static void grantedOnceByMasters1And2(LockClient client, String name) throws InterruptedException {
        long deadline = System.nanoTime() + Duration.ofSeconds(15).toNanos();
        while (true) {
            try {
                var granted = client.lock(name).tryAcquire();
                if (granted.isPresent()) {
                    granted.get().close();
                    return;
                }
            } catch (LockBackendException e) {
                // master 2 not reconnected yet
            }
            assertThat(System.nanoTime() - deadline).as("masters 1 and 2 grant").isNegative();
            Thread.sleep(50);
        }
    }

    /**
     * Takes grants, each with a token above the one before, until a write-back has reached {@code
     * restarted}: one master at a time lacks the latest token, as the guarantee assumes (two at once, the
     * restarted one not yet caught up and the next one restarted, are a majority of three).
     */
    private static long grantsUntilCaughtUp(
            LockClient client, RedisServer restarted, String counter, long last, String after)
            throws InterruptedException {
        long deadline = System.nanoTime() + Duration.ofSeconds(15).toNanos();
        do {
            try (Lease lease = acquireWhenBack(client)) {
                assertThat(lease.fencingToken()).as("token after " + after).isGreaterThan(last);
                last = lease.fencingToken();
            }
            assertThat(System.nanoTime() - deadline)
                    .as("the write-back reached the restarted master")
                    .isNegative();
        } while (counterOf(restarted, counter) < last);
        return last;
    }

    private static long counterOf(RedisServer server, String key) {
        Object value = server.call("GET", key);
        return value == null ? 0 : Long.parseLong(value.toString());
    }

    private static Lease acquireWhenBack(LockClient client) throws InterruptedException {
        long deadline = System.nanoTime() + Duration.ofSeconds(15).toNanos();
        while (true) {
            try {
                return client.lock("t").acquire(Duration.ofSeconds(5));
            } catch (LockBackendException e) {
                assertThat(System.nanoTime() - deadline).as("works again: " + e).isNegative();
                Thread.sleep(100);
            }
        }
    }

    /**
     * The classic Redlock hazard: A holds on masters 0 and 1 while master 2 is down; master 1 restarts
     * without its data and master 2 comes back. Without the delayed-restart rule B gets masters 1 and 2
     * while A's lease is still valid. With {@code minUptime} at least the lease time, the restarted
     * masters are refused until A's lease has run out.
     */
    @Test
    void delayedRestartRuleKeepsARestartedMasterOutOfTheVote() throws Exception {
        assertThat(afterRestart("")).isEqualTo("B granted while A's lease was valid");
        assertThat(afterRestart("?minUptime=3s")).isEqualTo("B refused (minUptime), then granted after A's lease");
    }

    private static String afterRestart(String query) throws Exception {
        try (RedlockServers servers = new RedlockServers(3)) {
            if (!query.isEmpty()) {
                Thread.sleep(3_000); // fresh masters must pass the uptime check for A
            }
            // A never renews: its lease stays valid for its whole lease time, whatever the masters do.
            try (LockClient a = LockClient.builder(servers.uri(query))
                            .leaseTime(Duration.ofSeconds(2))
                            .renewal(false)
                            .namespace("restart")
                            .build();
                    LockClient b = LockClient.builder(servers.uri(query))
                            .namespace("restart")
                            .build()) {
                servers.get(2).kill();
                Lease held = a.lock("r").acquire(Duration.ofSeconds(5));
                servers.get(1).restart();
                servers.get(2).restart();
                boolean refused = false;
                long until = System.nanoTime() + Duration.ofSeconds(10).toNanos();
                while (System.nanoTime() - until < 0) {
                    try {
                        var granted = b.lock("r").tryAcquire();
                        if (granted.isPresent()) {
                            boolean aValid = held.isValid();
                            granted.get().close();
                            if (aValid) {
                                return "B granted while A's lease was valid";
                            }
                            return refused
                                    ? "B refused (minUptime), then granted after A's lease"
                                    : "B granted after A's lease, never refused";
                        }
                    } catch (LockBackendException e) {
                        // Refused, or masters 1 and 2 not reconnected yet.
                        refused |= e.getMessage().contains("minUptime");
                    }
                    Thread.sleep(20);
                }
                return "B never granted";
            }
        }
    }

    @Test
    void evictingMastersAreRefusedUnlessAllowed() {
        try (RedlockServers servers = new RedlockServers(3);
                RedisServer evicting = RedisServer.start("--maxmemory-policy", "volatile-lru")) {
            String uri = "redlock://127.0.0.1:" + servers.get(0).port() + ",127.0.0.1:"
                    + servers.get(1).port() + ",127.0.0.1:" + evicting.port();
            assertThatThrownBy(() -> LockClient.connect(uri))
                    .isInstanceOf(LockBackendException.class)
                    .hasMessageContaining("127.0.0.1:" + evicting.port())
                    .hasMessageContaining("maxmemory-policy 'volatile-lru'")
                    .hasMessageContaining("allowEviction=true");
            try (LockClient allowed = LockClient.connect(uri + "?allowEviction=true&unsafeGrantAfterRestart=true")) {
                allowed.lock("e").tryAcquire().orElseThrow().close();
            }
        }
    }
}
