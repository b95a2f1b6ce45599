package dev.dlock.redis;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;

import dev.dlock.DistributedLock;
import dev.dlock.Lease;
import dev.dlock.LockClient;
import dev.dlock.LockInfo;
import dev.dlock.spi.AcquireRequest;
import dev.dlock.spi.AcquireResult;
import dev.dlock.spi.BackendContext;
import dev.dlock.spi.LockKey;
import dev.dlock.spi.Mode;
import dev.dlock.spi.RenewRequest;
import java.time.Duration;
import java.util.ArrayList;
import java.util.List;
import java.util.Set;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.TimeUnit;
import org.junit.jupiter.api.AfterAll;
import org.junit.jupiter.api.BeforeAll;
import org.junit.jupiter.api.Test;

/**
 * The exclusive fast path ({@code exclusive.lua}) at the SPI level: compare-and-delete release and
 * compare-and-renew against an expired and re-granted hold, a wake-up published only when someone waits
 * (and never lost when two waiters take turns), and the hold of a client still running the general
 * script on the same keys (a rolling upgrade) excluding fast-path grants and the other way round, with
 * tokens increasing across both.
 */
class ExclusiveFastPathTest {
    private static final String NAMESPACE = "fast";
    private static RedisServer server;
    private static RedisBackend backend;

    @BeforeAll
    static void start() {
        server = RedisServer.start();
        backend = (RedisBackend)
                RedisBackends.of(server.uri()).open(new BackendContext(null, Duration.ofSeconds(5), reason -> {}));
    }

    @AfterAll
    static void stop() {
        backend.close();
        server.close();
    }

    private static LockKey key(String name) {
        return new LockKey(NAMESPACE, name, Mode.EXCLUSIVE);
    }

    private static AcquireResult acquire(LockKey key, String owner, long leaseMillis, boolean waiting) {
        return backend.acquire(new AcquireRequest(key, owner, leaseMillis, 1, waiting ? leaseMillis : 0, null))
                .toCompletableFuture()
                .join();
    }

    private static boolean release(LockKey key, String owner) {
        return backend.release(key, owner).toCompletableFuture().join();
    }

    private static void awaitFree(LockKey key) {
        long deadline = System.nanoTime() + TimeUnit.SECONDS.toNanos(5);
        while (!backend.describe(key).toCompletableFuture().join().holders().isEmpty()) {
            assertThat(System.nanoTime()).as("hold expired").isLessThan(deadline);
            RedisServer.sleep(5);
        }
    }

    @Test
    void aLateReleaseAfterExpiryAndRegrantLeavesTheNewHolderAlone() {
        LockKey key = key("late-release");
        assertThat(acquire(key, "first", 50, false).isGranted()).isTrue();
        awaitFree(key);
        AcquireResult second = acquire(key, "second", 10_000, false);
        assertThat(second.isGranted()).isTrue();
        assertThat(release(key, "first")).isFalse();
        LockInfo info = backend.describe(key).toCompletableFuture().join();
        assertThat(info.holders()).hasSize(1);
        assertThat(info.holders().get(0).owner()).isEqualTo("second");
        assertThat(info.holders().get(0).fencingToken()).isEqualTo(second.token());
        assertThat(info.holders().get(0).mode()).isEqualTo("exclusive");
        assertThat(acquire(key, "third", 10_000, false).isGranted()).isFalse();
        assertThat(release(key, "second")).isTrue();
        assertThat(release(key, "second")).isFalse();
    }

    @Test
    void renewingAHoldThatExpiredAndWasRegrantedReportsItLost() {
        LockKey key = key("late-renewal");
        assertThat(acquire(key, "first", 50, false).isGranted()).isTrue();
        awaitFree(key);
        assertThat(acquire(key, "second", 500, false).isGranted()).isTrue();
        List<RenewRequest> batch =
                List.of(new RenewRequest(key, "first", 10_000), new RenewRequest(key, "second", 10_000));
        Set<String> lost = backend.renew(batch).toCompletableFuture().join();
        assertThat(lost).containsExactly("first");
        // the renewal reached the holder: its hold now outlives the 500 ms it was granted
        RedisServer.sleep(700);
        assertThat(backend.describe(key).toCompletableFuture().join().holders())
                .extracting(LockInfo.Holder::owner)
                .containsExactly("second");
        release(key, "second");
    }

    @Test
    void anUncontendedReleasePublishesNothingAndAReleaseWithAWaiterPublishesOnce() {
        LockKey key = key("publish");
        long before = commandCalls("publish");
        for (int i = 0; i < 20; i++) {
            assertThat(acquire(key, "alone", 10_000, false).isGranted()).isTrue();
            assertThat(release(key, "alone")).isTrue();
        }
        assertThat(commandCalls("publish") - before).isZero();
        assertThat(acquire(key, "holder", 10_000, false).isGranted()).isTrue();
        AcquireResult busy = acquire(key, "waiter", 10_000, true);
        assertThat(busy.isGranted()).isFalse();
        assertThat(busy.retryAfterMillis()).isBetween(1L, 10_000L);
        // a try without waiting leaves no marker, so it alone would not cost the release a PUBLISH
        assertThat(acquire(key, "trier", 10_000, false).isGranted()).isFalse();
        assertThat(release(key, "holder")).isTrue();
        assertThat(commandCalls("publish") - before).isEqualTo(1);
        // the marker went with that release: the next uncontended cycle publishes nothing again
        assertThat(acquire(key, "waiter", 10_000, true).isGranted()).isTrue();
        assertThat(release(key, "waiter")).isTrue();
        assertThat(commandCalls("publish") - before).isEqualTo(1);
    }

    @Test
    void twoWaitingClientsTakeTurnsOnWakeUpsLongBeforeTheLeaseWouldRunOut() throws Exception {
        // Lease 20 s: a waiter whose wake-up was lost would only retry when the holder's lease runs out.
        try (LockClient a = client();
                LockClient b = client();
                LockClient c = client()) {
            Lease held = a.lock("turns").acquire(Duration.ofSeconds(5));
            long start = System.nanoTime();
            List<CompletableFuture<Long>> waiters = new ArrayList<>();
            for (LockClient waiter : List.of(b, c)) {
                DistributedLock lock = waiter.lock("turns");
                waiters.add(CompletableFuture.supplyAsync(() -> {
                    try (Lease lease = lock.acquire(Duration.ofSeconds(15))) {
                        RedisServer.sleep(100);
                        return lease.fencingToken();
                    }
                }));
            }
            RedisServer.sleep(300); // both are waiting (subscribed, marker set)
            held.close();
            List<Long> tokens = new ArrayList<>();
            for (CompletableFuture<Long> waiter : waiters) {
                tokens.add(waiter.get(15, TimeUnit.SECONDS));
            }
            assertThat(Duration.ofNanos(System.nanoTime() - start)).isLessThan(Duration.ofSeconds(5));
            assertThat(tokens).allMatch(token -> token > held.fencingToken()).doesNotHaveDuplicates();
        }
    }

    /**
     * A client of the previous release ran every mode through {@code dlock.lua}; its exclusive grant is
     * the script's writer grant on the same keys (a hash at {@code :h}). During a rolling upgrade both
     * kinds of client meet on one name: neither may grant while the other holds.
     */
    @Test
    void aHoldOfTheGeneralScriptAndAFastPathHoldExcludeEachOtherWithTokensIncreasing() {
        LockKey key = key("upgrade");
        ResourceKeys keys = ResourceKeys.of(key);
        long oldToken = (Long) generalAcquire(keys, "old-client");
        assertThat(oldToken).isPositive();
        AcquireResult refused = acquire(key, "new-client", 10_000, false);
        assertThat(refused.isGranted()).isFalse();
        assertThat(refused.retryAfterMillis()).isBetween(1L, 10_000L);
        assertThat(release(key, "old-client"))
                .as("the fast path never removes a hash hold")
                .isFalse();
        assertThat(server.call("EXISTS", keys.holders())).isEqualTo(1L);
        generalRelease(keys, "old-client");

        AcquireResult fresh = acquire(key, "new-client", 10_000, false);
        assertThat(fresh.isGranted()).isTrue();
        assertThat(fresh.token()).isGreaterThan(oldToken);
        // The old script grants a writer when its expiry set is empty, then fails writing the hash: an
        // error, no second holder.
        assertThatThrownBy(() -> generalAcquire(keys, "old-client")).hasMessageContaining("WRONGTYPE");
        assertThat(backend.describe(key).toCompletableFuture().join().holders())
                .extracting(LockInfo.Holder::owner)
                .containsExactly("new-client");
        assertThat(release(key, "new-client")).isTrue();
        long later = (Long) generalAcquire(keys, "old-client");
        assertThat(later).isGreaterThan(fresh.token());
        generalRelease(keys, "old-client");
    }

    /**
     * Kinds never interact, even under one name ({@link Mode}): {@code lock(n)} (the fast path) and the
     * fair or read-write lock {@code n} (the general script) are separate locks with separate keys, so
     * the fast path shares no key with another kind's records.
     */
    @Test
    void theExclusiveKindSharesNoKeyWithTheOtherKindsOfTheSameName() {
        AcquireResult exclusive = acquire(key("kinds"), "exclusive-holder", 10_000, false);
        assertThat(exclusive.isGranted()).isTrue();
        for (Mode other : List.of(Mode.FAIR, Mode.WRITE, Mode.PERMIT)) {
            LockKey key = new LockKey(NAMESPACE, "kinds", other);
            AcquireResult granted = backend.acquire(new AcquireRequest(key, other + "-holder", 10_000, 1, 0, null))
                    .toCompletableFuture()
                    .join();
            assertThat(granted.isGranted()).as(other.toString()).isTrue();
            assertThat(granted.token()).isNotEqualTo(exclusive.token());
            assertThat(ResourceKeys.of(key).prefix())
                    .isNotEqualTo(ResourceKeys.of(key("kinds")).prefix());
            assertThat(backend.release(key, other + "-holder")
                            .toCompletableFuture()
                            .join())
                    .isTrue();
        }
        assertThat(backend.describe(key("kinds")).toCompletableFuture().join().holders())
                .extracting(LockInfo.Holder::owner)
                .containsExactly("exclusive-holder");
        assertThat(release(key("kinds"), "exclusive-holder")).isTrue();
    }

    private static Object generalAcquire(ResourceKeys keys, String owner) {
        List<String> command = new ArrayList<>(List.of("EVAL", LuaScript.DLOCK.body(), "5"));
        command.addAll(List.of(keys.withTokens()));
        command.addAll(List.of("acquire", owner, "W", "10000", "1", "0", "", "upgrade", "16"));
        return server.call(command.toArray(String[]::new));
    }

    private static void generalRelease(ResourceKeys keys, String owner) {
        List<String> command = new ArrayList<>(List.of("EVAL", LuaScript.DLOCK.body(), "4"));
        command.addAll(List.of(keys.resource()));
        command.addAll(List.of("release", owner, "W", keys.channel()));
        assertThat(server.call(command.toArray(String[]::new))).isEqualTo(1L);
    }

    private static LockClient client() {
        return LockClient.builder(server.uri())
                .namespace(NAMESPACE)
                .leaseTime(Duration.ofSeconds(20))
                .build();
    }

    private static long commandCalls(String command) {
        String info = (String) server.call("INFO", "commandstats");
        for (String line : info.split("\r\n")) {
            if (line.startsWith("cmdstat_" + command + ":")) {
                String calls = line.substring(line.indexOf("calls=") + 6);
                return Long.parseLong(calls.substring(0, calls.indexOf(',')));
            }
        }
        return 0;
    }
}
