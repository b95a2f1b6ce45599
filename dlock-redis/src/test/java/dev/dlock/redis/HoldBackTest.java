package dev.dlock.redis;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;

import dev.dlock.Lease;
import dev.dlock.LockBackendException;
import dev.dlock.LockClient;
import dev.dlock.LockInfo;
import dev.dlock.LockListener;
import dev.dlock.LockTimeoutException;
import java.time.Duration;
import java.util.List;
import java.util.Optional;
import java.util.concurrent.CopyOnWriteArrayList;
import java.util.concurrent.TimeUnit;
import java.util.logging.Handler;
import java.util.logging.Level;
import java.util.logging.LogRecord;
import java.util.logging.Logger;
import org.junit.jupiter.api.Test;

/**
 * The hold-back after a lost state, on the default settings (with a short declared max lease so the test
 * is quick): a standalone server restarted without persistence grants nothing while a lease it forgot may
 * still be valid, and the Redlock masters do the same. The opt-out gives the early grant of before.
 */
class HoldBackTest {
    private static final Duration LEASE = Duration.ofSeconds(2);
    /** Held here: JUL keeps loggers weakly, and a collected one would lose the handler. */
    private static final Logger LOGGER = Logger.getLogger(RedisBackend.class.getName());
    /** The longest a hold-back may last after a restart: max lease, 1% drift, the uptime's second. */
    private static final long HOLD_BACK_BOUND_MILLIS = LEASE.toMillis() + LEASE.toMillis() / 100 + 2 + 1_000;

    private static LockClient client(String uri, boolean renewal) {
        return LockClient.builder(uri)
                .leaseTime(LEASE)
                .renewal(renewal)
                .namespace("told")
                .build();
    }

    /**
     * A renewing holder on a server that restarts without persistence: another client's {@code tryLock()}
     * answers false at once, its waiting acquire is granted only once the holder has been told (its
     * renewal found the hold gone), the hold-back ends within its bound, it is logged once, and the token
     * is above the lost holder's.
     */
    @Test
    void aRenewingHolderIsToldBeforeAnotherClientIsGranted() throws Exception {
        List<LogRecord> warnings = captureWarnings();
        try (RedisServer server = RedisServer.start();
                LockClient holder = client(server.plainUri() + "?maxLease=2s", true);
                LockClient other = client(server.plainUri() + "?maxLease=2s", true)) {
            Lease held = holder.lock("r").acquire(Duration.ofSeconds(10)); // waits out the fresh server's hold-back
            warnings.clear();
            server.restart();
            long restarted = System.nanoTime();
            Optional<Lease> early = tryUntilConnected(other);
            assertThat(early).as("tryLock() during the hold-back").isEmpty();
            try (Lease granted = other.lock("r").acquire(Duration.ofSeconds(10))) {
                long after = TimeUnit.NANOSECONDS.toMillis(System.nanoTime() - restarted);
                assertThat(held.whenLost())
                        .as("the holder was told before the grant")
                        .isDone();
                assertThat(held.isValid()).isFalse();
                assertThat(after)
                        .as("the hold-back ends (ms after the restart)")
                        .isLessThan(HOLD_BACK_BOUND_MILLIS + 1_000);
                assertThat(granted.fencingToken()).isGreaterThan(held.fencingToken());
            }
            assertThat(warnings)
                    .as("one line per hold-back, with its end")
                    .hasSize(1)
                    .allSatisfy(r ->
                            assertThat(r.getMessage()).contains("holds grants").contains("back until"));
        }
    }

    /**
     * What a user sees of a hold-back besides the log line: the client's listener is told of each held-back
     * answer ({@code heldBack}, what the Micrometer counter counts), and a wait that times out during it
     * says so, with the end.
     */
    @Test
    void aHoldBackIsToldToTheListenerAndNamedInATimeout() throws Exception {
        List<Duration> heldBack = new CopyOnWriteArrayList<>();
        try (RedisServer server = RedisServer.start();
                LockClient holder = client(server.plainUri() + "?maxLease=2s", true);
                LockClient other = LockClient.builder(server.plainUri() + "?maxLease=2s")
                        .leaseTime(LEASE)
                        .namespace("told")
                        .listener(recording(heldBack))
                        .build()) {
            holder.lock("r").acquire(Duration.ofSeconds(10));
            server.restart();
            assertThat(tryUntilConnected(other)).isEmpty();
            assertThatThrownBy(() -> other.lock("r").acquire(Duration.ofMillis(300)))
                    .isInstanceOf(LockTimeoutException.class)
                    .hasMessageContaining("the store held grants back until");
            assertThat(awaitToldOf(heldBack))
                    .as("told of the held-back answers")
                    .isNotEmpty()
                    .allSatisfy(left -> assertThat(left).isPositive().isLessThan(Duration.ofSeconds(4)));
        }
    }

    /**
     * {@code describe} shows a hold-back while it lasts, without starting one: after a restart the free
     * lock is described with the time a grant asked now would be held back, the question writes no marker,
     * and once it reads zero a grant goes through at once.
     */
    @Test
    void describeShowsAHoldBackWithoutWritingTheMarker() throws Exception {
        try (RedisServer server = RedisServer.start();
                LockClient holder = client(server.plainUri() + "?maxLease=2s", true);
                LockClient other = client(server.plainUri() + "?maxLease=2s", true)) {
            holder.lock("r").acquire(Duration.ofSeconds(10)).close(); // waits out the fresh server's hold-back
            assertThat(other.describe("r")).as("free and not held back").isEmpty();
            server.restart();
            List<LockInfo> during = describeUntilConnected(other);
            assertThat(during).as("described during the hold-back").isNotEmpty().allSatisfy(info -> {
                assertThat(info.holders()).isEmpty();
                assertThat(info.heldBack()).isPositive().isLessThanOrEqualTo(Duration.ofMillis(HOLD_BACK_BOUND_MILLIS));
            });
            assertThat(server.call("EXISTS", ResourceKeys.epoch("told")))
                    .as("describe wrote no marker")
                    .isEqualTo(0L);
            long deadline = System.nanoTime() + TimeUnit.MILLISECONDS.toNanos(HOLD_BACK_BOUND_MILLIS + 1_000);
            while (!other.describe("r").isEmpty()) {
                assertThat(System.nanoTime() - deadline)
                        .as("the hold-back ends")
                        .isNegative();
                Thread.sleep(20);
            }
            assertThat(other.lock("r").tryAcquire())
                    .as("granted once describe shows no hold-back")
                    .isPresent();
        }
    }

    /**
     * The namespace's hold-back, asked without a lock name ({@code LockClient.heldBack()}, what {@code dlock
     * console} shows: after a restart the store lists no lock to describe): zero before the restart,
     * within its bound during the hold-back, counting down to zero, and a grant goes through then. A client
     * that opted out is never held back.
     */
    @Test
    void theNamespaceHoldBackIsToldWithoutALockName() throws Exception {
        try (RedisServer server = RedisServer.start();
                LockClient holder = client(server.plainUri() + "?maxLease=2s", true);
                LockClient other = client(server.plainUri() + "?maxLease=2s", true);
                LockClient optedOut = client(server.plainUri() + "?unsafeGrantAfterRestart=true", true)) {
            holder.lock("r").acquire(Duration.ofSeconds(10)).close(); // waits out the fresh server's hold-back
            assertThat(other.heldBack()).isZero();
            server.restart();
            describeUntilConnected(other);
            Duration first = other.heldBack();
            assertThat(first).isPositive().isLessThanOrEqualTo(Duration.ofMillis(HOLD_BACK_BOUND_MILLIS));
            assertThat(optedOut.heldBack()).as("the opt-out").isZero();
            Thread.sleep(200);
            assertThat(other.heldBack()).as("counts down").isLessThan(first);
            long deadline = System.nanoTime() + TimeUnit.MILLISECONDS.toNanos(HOLD_BACK_BOUND_MILLIS + 1_000);
            while (!other.heldBack().isZero()) {
                assertThat(System.nanoTime() - deadline)
                        .as("the hold-back ends")
                        .isNegative();
                Thread.sleep(20);
            }
            assertThat(other.lock("r").tryAcquire())
                    .as("granted once the namespace is no longer held back")
                    .isPresent();
        }
    }

    /** A holder that does not renew is never told by the store: the next grant waits until its lease ran out. */
    @Test
    void aHolderThatDoesNotRenewKeepsItsLeaseUntilItRunsOutByItsClock() throws Exception {
        try (RedisServer server = RedisServer.start();
                LockClient holder = client(server.plainUri() + "?maxLease=2s", false);
                LockClient other = client(server.plainUri() + "?maxLease=2s", true)) {
            Lease held = holder.lock("r").acquire(Duration.ofSeconds(10));
            server.restart();
            assertThat(tryUntilConnected(other))
                    .as("tryLock() during the hold-back")
                    .isEmpty();
            try (Lease granted = other.lock("r").acquire(Duration.ofSeconds(10))) {
                assertThat(held.isValid())
                        .as("the holder's lease by its own clock")
                        .isFalse();
                assertThat(granted.fencingToken()).isGreaterThan(held.fencingToken());
            }
        }
    }

    /** The opt-out: granted at once after the restart, while the holder still believes it holds. */
    @Test
    void theOptOutGrantsAtOnceAsBefore() throws Exception {
        try (RedisServer server = RedisServer.start();
                LockClient holder = LockClient.builder(server.uri())
                        .leaseTime(Duration.ofSeconds(10))
                        .renewal(false)
                        .build();
                LockClient other = LockClient.connect(server.uri())) {
            Lease held = holder.lock("r").acquire(Duration.ofSeconds(10));
            server.restart();
            Optional<Lease> granted = tryUntilConnected(other);
            assertThat(granted).as("granted at once").isPresent();
            assertThat(held.isValid()).as("two holders").isTrue();
            assertThat(granted.get().fencingToken()).isGreaterThan(held.fencingToken());
            granted.get().close();
        }
    }

    @Test
    void aLeaseLongerThanTheDeclaredMaximumIsRefusedNamingBoth() {
        try (RedisServer server = RedisServer.start();
                LockClient client = LockClient.builder(server.plainUri() + "?maxLease=2s")
                        .leaseTime(Duration.ofSeconds(3))
                        .build()) {
            assertThatThrownBy(() -> client.lock("r").tryAcquire())
                    .hasMessageContaining("3000ms")
                    .hasMessageContaining("maxLease (2000ms)");
        }
    }

    /**
     * An extend is bounded like a grant: a lease extended past the declared maximum would outlast the
     * hold-back after a restart, and its holder, renewing only every third of the longer time, could be
     * told after another client was granted.
     */
    @Test
    void anExtendLongerThanTheDeclaredMaximumIsRefusedAndTheLeaseKeepsItsTime() {
        try (RedisServer server = RedisServer.start();
                LockClient client = LockClient.builder(server.plainUri() + "?maxLease=2s")
                        .leaseTime(Duration.ofSeconds(1))
                        .build();
                Lease lease = client.lock("r").acquire(Duration.ofSeconds(5))) {
            assertThatThrownBy(() -> lease.extend(Duration.ofSeconds(30)))
                    .isInstanceOf(LockBackendException.class) // as a refused grant: the store's refusal
                    .hasMessageContaining("30000ms")
                    .hasMessageContaining("maxLease (2000ms)");
            assertThat(lease.isValid()).isTrue();
            assertThat(lease.remaining()).isLessThanOrEqualTo(Duration.ofSeconds(1));
            lease.extend(Duration.ofSeconds(2)); // up to the maximum is fine
        }
    }

    @Test
    void aClientDeclaringLessThanAnotherClientOfTheNamespaceIsRefusedNamingBoth() throws Exception {
        try (RedisServer server = RedisServer.start();
                LockClient longer = client(server.plainUri() + "?maxLease=2s", true);
                LockClient shorter = LockClient.builder(server.plainUri() + "?maxLease=1s")
                        .leaseTime(Duration.ofSeconds(1))
                        .namespace("told")
                        .build()) {
            longer.lock("a").acquire(Duration.ofSeconds(10)).close();
            assertThatThrownBy(() -> shorter.lock("b").tryAcquire())
                    .isInstanceOf(LockBackendException.class)
                    .hasMessageContaining("declares maxLease 1000ms")
                    .hasMessageContaining("declared 2000ms");
        }
    }

    /**
     * The Redlock hazard on default settings: A holds on masters 0 and 1 while master 2 is down; master 1
     * restarts without its data and master 2 comes back. The restarted masters answer busy until A's
     * lease has run out, so B is granted only then, with a larger token.
     */
    @Test
    void redlockRestartedMastersStayOutOfTheVoteUntilTheLeaseRanOut() throws Exception {
        try (RedlockServers servers = new RedlockServers(3)) {
            String uri = servers.plainUri("?maxLease=2s");
            try (LockClient a = client(uri, false);
                    LockClient b = client(uri, true)) {
                servers.get(2).kill();
                Lease held = a.lock("r").acquire(Duration.ofSeconds(10));
                servers.get(1).restart();
                servers.get(2).restart();
                long restarted = System.nanoTime();
                Optional<Lease> early = tryUntilConnected(b);
                assertThat(early)
                        .as("tryLock() while the restarted masters hold back")
                        .isEmpty();
                assertThat(b.heldBack())
                        .as("a majority of masters holds back: the namespace is held back")
                        .isPositive()
                        .isLessThanOrEqualTo(Duration.ofMillis(HOLD_BACK_BOUND_MILLIS));
                try (Lease granted = b.lock("r").acquire(Duration.ofSeconds(10))) {
                    long after = TimeUnit.NANOSECONDS.toMillis(System.nanoTime() - restarted);
                    assertThat(held.isValid()).as("A's lease by its own clock").isFalse();
                    assertThat(after).isLessThan(HOLD_BACK_BOUND_MILLIS + 1_000);
                    assertThat(granted.fencingToken()).isGreaterThan(held.fencingToken());
                }
            }
        }
    }

    /**
     * Redlock: an acquisition that misses its majority because the masters hold grants back is told as a
     * hold-back (listener, timeout message), as on one server. Fresh masters hold back their namespace's
     * first grant for the declared max lease (they cannot be told from masters that lost their data).
     */
    @Test
    void redlockTellsAHoldBackThatKeptItsMajority() throws Exception {
        List<Duration> heldBack = new CopyOnWriteArrayList<>();
        try (RedlockServers servers = new RedlockServers(3);
                LockClient client = LockClient.builder(servers.plainUri("?maxLease=20s"))
                        .leaseTime(LEASE)
                        .namespace("told")
                        .listener(recording(heldBack))
                        .build()) {
            assertThat(client.lock("r").tryAcquire())
                    .as("tryLock() while every master holds back")
                    .isEmpty();
            assertThat(client.heldBack())
                    .as("the namespace's hold-back")
                    .isGreaterThan(Duration.ofSeconds(10))
                    .isLessThan(Duration.ofSeconds(22));
            assertThat(client.describe("r"))
                    .as("describe shows the majority's hold-back")
                    .isNotEmpty()
                    .allSatisfy(info -> assertThat(info.heldBack())
                            .isGreaterThan(Duration.ofSeconds(10))
                            .isLessThan(Duration.ofSeconds(22)));
            assertThatThrownBy(() -> client.lock("r").acquire(Duration.ofMillis(300)))
                    .isInstanceOf(LockTimeoutException.class)
                    .hasMessageContaining("the store held grants back until");
            assertThat(awaitToldOf(heldBack))
                    .as("told of the held-back answers")
                    .isNotEmpty()
                    .allSatisfy(left -> assertThat(left)
                            .isGreaterThan(Duration.ofSeconds(10))
                            .isLessThan(Duration.ofSeconds(22)));
        }
    }

    /**
     * {@code tryLock()} answers false at once, and the waiting acquire is granted only after the holder
     * was told (its renewal found the hold gone, or its lease ran out by its own clock), with a larger
     * token. A waiting acquire that fails because a connection is not back yet (the wake-up subscription
     * after a failover) is asked again.
     */
    static void assertToldBeforeTheNextGrant(Lease held, LockClient other) throws Exception {
        assertThat(tryUntilConnected(other))
                .as("tryLock() during the hold-back")
                .isEmpty();
        long until = System.nanoTime() + TimeUnit.SECONDS.toNanos(30);
        Lease next = null;
        while (next == null) {
            try {
                next = other.lock("r").acquire(Duration.ofSeconds(30));
            } catch (LockBackendException e) {
                if (System.nanoTime() - until > 0) {
                    throw e;
                }
                Thread.sleep(50);
            }
        }
        try (Lease granted = next) {
            assertThat(held.whenLost())
                    .as("the holder was told before the grant")
                    .isDone();
            assertThat(held.isValid()).isFalse();
            assertThat(granted.fencingToken()).isGreaterThan(held.fencingToken());
        }
    }

    /** {@code tryLock()} once the client is connected again (a failure means not reconnected yet). */
    static Optional<Lease> tryUntilConnected(LockClient client) throws InterruptedException {
        long until = System.nanoTime() + TimeUnit.SECONDS.toNanos(5);
        while (true) {
            try {
                return client.lock("r").tryAcquire();
            } catch (LockBackendException e) {
                if (System.nanoTime() - until > 0) {
                    throw e;
                }
                Thread.sleep(10);
            }
        }
    }

    /** A listener that records the hold-backs it is told of. */
    private static LockListener recording(List<Duration> heldBack) {
        return new LockListener() {
            @Override
            public void heldBack(String name, Duration left) {
                heldBack.add(left);
            }
        };
    }

    /** The recorded hold-backs once there is one, or after 5 s (the listener runs on its own thread). */
    private static List<Duration> awaitToldOf(List<Duration> heldBack) throws InterruptedException {
        long deadline = System.nanoTime() + TimeUnit.SECONDS.toNanos(5);
        while (heldBack.isEmpty() && System.nanoTime() < deadline) {
            Thread.sleep(10);
        }
        return heldBack;
    }

    private static List<LockInfo> describeUntilConnected(LockClient client) throws InterruptedException {
        long until = System.nanoTime() + TimeUnit.SECONDS.toNanos(5);
        while (true) {
            try {
                return client.describe("r");
            } catch (LockBackendException e) {
                if (System.nanoTime() - until > 0) {
                    throw e;
                }
                Thread.sleep(10);
            }
        }
    }

    private static List<LogRecord> captureWarnings() {
        List<LogRecord> records = new CopyOnWriteArrayList<>();
        LOGGER.addHandler(new Handler() {
            @Override
            public void publish(LogRecord record) {
                if (record.getLevel().intValue() >= Level.WARNING.intValue()) {
                    records.add(record);
                }
            }

            @Override
            public void flush() {}

            @Override
            public void close() {}
        });
        return records;
    }
}
