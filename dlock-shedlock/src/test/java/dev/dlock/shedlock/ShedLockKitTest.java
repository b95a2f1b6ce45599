package dev.dlock.shedlock;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;

import dev.dlock.Lease;
import dev.dlock.LeaseLostException;
import dev.dlock.LockClient;
import java.time.Duration;
import java.time.Instant;
import java.util.ArrayList;
import java.util.List;
import java.util.Optional;
import java.util.concurrent.ThreadLocalRandom;
import java.util.concurrent.TimeUnit;
import net.javacrumbs.shedlock.core.DefaultLockingTaskExecutor;
import net.javacrumbs.shedlock.core.ExtensibleLockProvider;
import net.javacrumbs.shedlock.core.LockConfiguration;
import net.javacrumbs.shedlock.core.LockExtender;
import net.javacrumbs.shedlock.core.LockingTaskExecutor;
import net.javacrumbs.shedlock.core.SimpleLock;
import net.javacrumbs.shedlock.test.support.AbstractExtensibleLockProviderIntegrationTest;
import org.junit.jupiter.api.AfterEach;
import org.junit.jupiter.api.BeforeEach;
import org.junit.jupiter.api.Test;

/**
 * ShedLock's own provider test kit (shedlock-test-support: every case of {@link
 * AbstractExtensibleLockProviderIntegrationTest} and of the plain provider test it extends) on one store,
 * plus what this provider adds: the minimum hold measured against another process's client, the fencing
 * token inside a job, the lost signal of a job that outlives {@code lockAtMostFor}, and no waiting.
 *
 * <p>Each test method works in a namespace of its own, so the names the kit reuses ({@code name2}, the fuzz
 * test's {@code lock1}) and locks left held by a minimum hold never meet another method's.
 */
abstract class ShedLockKitTest extends AbstractExtensibleLockProviderIntegrationTest {
    private final String namespace =
            "shed-" + Integer.toHexString(ThreadLocalRandom.current().nextInt() >>> 4);
    private final List<LockClient> clients = new ArrayList<>();
    private LockClient client;
    private DlockLockProvider provider;

    /** The URI of the store this class tests. */
    abstract String uri();

    /** Whether the store ends a hold by its own expiry (Redis, SQL, memory), not with the client's session. */
    boolean storeExpiresHolds() {
        return true;
    }

    @BeforeEach
    void connect() {
        client = newClient();
        provider = DlockLockProvider.of(client);
    }

    @AfterEach
    void closeClients() {
        clients.forEach(LockClient::close);
    }

    /** Another client of the same store and namespace, as another process would have. */
    LockClient newClient() {
        LockClient c = LockClient.builder(uri()).namespace(namespace).build();
        clients.add(c);
        return c;
    }

    /**
     * The kit's case ({@code doTestTimeout}) with its steps written here, because both of its
     * {@code lockAtMostFor}s are too short for the loaded 2-core test lanes: the first is the argument, the
     * second a fixed 50 ms. A {@code lockAtMostFor} under a second is granted for a second and then cut to
     * what is left of it, a second round trip ({@code HeldLock#shortened}); when that answer comes after the
     * 50 ms, the provider answers empty (the job must not start after its {@code lockAtMostFor}). Lane stalls
     * longer than 50 ms failed the kit's case on etcd (2 of 2 runs; its cut is a round trip to a Raft
     * leader), on PostgreSQL beside the Lincheck check, on memory and Redis (dry run 3 of the seventh
     * session) and, with the first time at 400 ms, on etcd again at the second lock (the CI run of stop 36:
     * empty after the sleep, with the lock free). The steps and what they check are the kit's: the lock is
     * taken, is free again after {@code lockAtMostFor} without an unlock, and is taken again; both times are
     * 400 ms here.
     */
    @Test
    @Override
    public void shouldTimeout() throws InterruptedException {
        Duration atMost = Duration.ofMillis(400);
        assertThat(provider.lock(config(LOCK_NAME1, atMost, Duration.ZERO))).isNotEmpty();
        Thread.sleep(atMost.toMillis() * 2);
        assertUnlocked(LOCK_NAME1);
        Optional<SimpleLock> again = provider.lock(config(LOCK_NAME1, atMost, Duration.ZERO));
        assertThat(again).as("taken again after lockAtMostFor").isNotEmpty();
        again.get().unlock();
    }

    /**
     * The kit's case with its steps written here, with a {@code lockAtMostFor} of 400 ms instead of the
     * kit's fixed 2 ms (and a sleep of twice that, as the kit's 4 ms): a lock under a second is granted for a
     * second and cut to what is left of it, at least 50 ms, and when that cut's answer comes after the 50 ms
     * the provider answers empty, which the kit's first assertion refuses. That happened on PostgreSQL in the
     * third dry run of 2026-11-27 (the cut's round trip on a loaded lane). The steps and checks are the
     * kit's: the lock is taken, cannot be extended once {@code lockAtMostFor} has passed, and is free then.
     */
    @Test
    @Override
    public void shouldNotBeAbleToExtendExpiredLock() {
        Duration atMost = Duration.ofMillis(400);
        Optional<SimpleLock> lock = provider.lock(config(LOCK_NAME1, atMost, Duration.ZERO));
        assertThat(lock).isNotEmpty();
        sleepFor(atMost.multipliedBy(2));
        assertThat(lock.get().extend(Duration.ofSeconds(10), Duration.ZERO)).isEmpty();
        assertUnlocked(LOCK_NAME1);
    }

    @Override
    protected ExtensibleLockProvider getLockProvider() {
        return provider;
    }

    @Override
    protected void assertLocked(String lockName) {
        assertThat(client.describe(lockName)).as("holders of %s", lockName).isNotEmpty();
    }

    @Override
    protected void assertUnlocked(String lockName) {
        assertThat(client.describe(lockName)).as("holders of %s", lockName).isEmpty();
    }

    static LockConfiguration config(String name, Duration lockAtMostFor, Duration lockAtLeastFor) {
        return new LockConfiguration(Instant.now(), name, lockAtMostFor, lockAtLeastFor);
    }

    @Test
    void aJobEndingEarlyKeepsTheLockFromOtherProcessesForLockAtLeastFor() throws Exception {
        DlockLockProvider otherProcess = DlockLockProvider.of(newClient());
        Duration atLeast = Duration.ofMillis(1500);
        SimpleLock lock =
                provider.lock(config("report", Duration.ofSeconds(30), atLeast)).orElseThrow();
        long started = System.nanoTime();
        lock.unlock();

        Optional<SimpleLock> next;
        while ((next = otherProcess.lock(config("report", Duration.ofSeconds(30), Duration.ZERO))).isEmpty()) {
            Thread.sleep(1);
        }
        long heldMillis = TimeUnit.NANOSECONDS.toMillis(System.nanoTime() - started);
        next.get().unlock();
        assertThat(heldMillis)
                .as("the lock went to another process after %d ms", heldMillis)
                .isGreaterThanOrEqualTo(atLeast.toMillis())
                .isLessThan(atLeast.toMillis() + 3_000);
    }

    @Test
    void aJobEndingEarlyLeavesTheStoreKeepingTheLockOnlyUntilLockAtLeastForIfTheNodeDies() {
        Duration atLeast = Duration.ofSeconds(2);
        SimpleLock lock = provider.lock(config("nightly", Duration.ofMinutes(10), atLeast))
                .orElseThrow();
        long unlocked = System.nanoTime();
        lock.unlock();
        List<dev.dlock.LockInfo> held = client.describe("nightly");
        assertThat(held).as("kept for lockAtLeastFor").isNotEmpty();
        if (storeExpiresHolds()) {
            // What the store would do if this node died now: let go by its own expiry.
            Duration storeKeepsIt = held.get(0).holders().get(0).expiresIn();
            assertThat(storeKeepsIt)
                    .as("the store's expiry after the unlock, not lockAtMostFor's 10 minutes")
                    .isLessThanOrEqualTo(
                            atLeast.plus(HeldLock.AFTER_THE_MINIMUM).plusMillis(100))
                    .isGreaterThan(atLeast.minusNanos(System.nanoTime() - unlocked));
        }
    }

    @Test
    void aJobReadsTheFencingTokenOfItsRunWhichAnExtensionKeeps() {
        LockingTaskExecutor executor = new DefaultLockingTaskExecutor(provider);
        List<Long> tokens = new ArrayList<>();
        for (int run = 0; run < 3; run++) {
            executor.executeWithLock(
                    (Runnable) () -> {
                        long token = DlockLockAssert.currentToken();
                        assertThat(client.describe("job")
                                        .get(0)
                                        .holders()
                                        .get(0)
                                        .fencingToken())
                                .isEqualTo(token);
                        LockExtender.extendActiveLock(Duration.ofSeconds(20), Duration.ZERO);
                        assertThat(DlockLockAssert.currentToken()).isEqualTo(token);
                        assertThat(DlockLockAssert.currentLease().orElseThrow().isValid())
                                .isTrue();
                        tokens.add(token);
                    },
                    config("job", Duration.ofSeconds(10), Duration.ZERO));
        }
        assertThat(tokens).hasSize(3).isSorted().doesNotHaveDuplicates();
        assertThat(DlockLockAssert.currentLease()).isEmpty();
        assertThatThrownBy(DlockLockAssert::currentToken)
                .isInstanceOf(IllegalStateException.class)
                .hasMessageContaining("holds no lock of a DlockLockProvider");
        assertUnlocked("job");
    }

    @Test
    void aJobOutlivingLockAtMostForIsToldAndAnotherProcessGetsTheLock() throws Exception {
        DlockLockProvider otherProcess = DlockLockProvider.of(newClient());
        SimpleLock lock = provider.lock(config("slow", Duration.ofMillis(300), Duration.ZERO))
                .orElseThrow();
        Lease lease = DlockLockAssert.currentLease().orElseThrow();

        assertThat(lease.whenLost().get(10, TimeUnit.SECONDS)).isNotNull();
        long deadline = System.nanoTime() + TimeUnit.SECONDS.toNanos(10);
        Optional<SimpleLock> taken;
        while ((taken = otherProcess.lock(config("slow", Duration.ofSeconds(10), Duration.ZERO))).isEmpty()) {
            assertThat(System.nanoTime() - deadline)
                    .as("the store frees the lock")
                    .isNegative();
            Thread.sleep(5);
        }
        assertThatThrownBy(lock::unlock).isInstanceOf(LeaseLostException.class).hasMessageContaining("slow");
        taken.get().unlock();
        assertThat(DlockLockAssert.currentLease()).isEmpty();
    }

    @Test
    void lockNeverWaitsForAnotherHolder() {
        DlockLockProvider otherProcess = DlockLockProvider.of(newClient());
        SimpleLock held = otherProcess
                .lock(config("busy", Duration.ofSeconds(30), Duration.ZERO))
                .orElseThrow();
        long start = System.nanoTime();
        assertThat(provider.lock(config("busy", Duration.ofSeconds(30), Duration.ZERO)))
                .isEmpty();
        assertThat(Duration.ofNanos(System.nanoTime() - start)).isLessThan(Duration.ofSeconds(2));
        held.unlock();
    }
}
