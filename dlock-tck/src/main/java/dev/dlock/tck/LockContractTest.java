package dev.dlock.tck;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;

import dev.dlock.DistributedLock;
import dev.dlock.DistributedReadWriteLock;
import dev.dlock.DistributedSemaphore;
import dev.dlock.Lease;
import dev.dlock.LeaseLostException;
import dev.dlock.LockBackendException;
import dev.dlock.LockClient;
import dev.dlock.LockException;
import dev.dlock.LockInfo;
import dev.dlock.LockListener;
import dev.dlock.LockRejectedException;
import dev.dlock.LockTimeoutException;
import java.nio.charset.StandardCharsets;
import java.nio.file.Files;
import java.nio.file.Path;
import java.time.Duration;
import java.util.ArrayList;
import java.util.Collections;
import java.util.List;
import java.util.Optional;
import java.util.concurrent.CancellationException;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.CopyOnWriteArrayList;
import java.util.concurrent.CountDownLatch;
import java.util.concurrent.ExecutionException;
import java.util.concurrent.ThreadLocalRandom;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.atomic.AtomicBoolean;
import java.util.concurrent.atomic.AtomicInteger;
import java.util.concurrent.atomic.AtomicReference;
import java.util.function.Consumer;
import org.junit.jupiter.api.AfterEach;
import org.junit.jupiter.api.BeforeEach;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.Timeout;

/**
 * The contract every dlock backend passes. A backend's test extends this class and implements three
 * hooks: how to build a client of the store under test, and how to make the store unreachable and
 * reachable again.
 *
 * <pre>{@code
 * class MyStoreContractTest extends LockContractTest {
 *     protected LockClient.Builder newClientBuilder() { return LockClient.builder("mystore://..."); }
 *     protected void stopStore() { proxy.cut(); }
 *     protected void startStore() { proxy.restore(); }
 * }
 * }</pre>
 *
 * <p>Every test uses a fresh random namespace, so tests do not see each other's locks. Times are
 * generous: the suite must pass on a loaded two-core machine; where it checks a bound, the bound is the
 * contract's (wait time plus a margin), never a performance target.
 */
@Timeout(value = 120, unit = TimeUnit.SECONDS)
public abstract class LockContractTest {
    private static final Duration LONG_WAIT = Duration.ofSeconds(20);

    private final List<LockClient> clients = new CopyOnWriteArrayList<>();
    private final java.util.Map<LockClient, FreezableBackend> freezable =
            new java.util.concurrent.ConcurrentHashMap<>();
    private String namespace;

    /** For subclasses. */
    protected LockContractTest() {}

    /**
     * A builder for a new client of the store under test. The suite sets namespace, operation timeout
     * and, per test, lease time and other options on it.
     *
     * @return a fresh builder
     */
    protected abstract LockClient.Builder newClientBuilder();

    /**
     * Makes the store unreachable for every client (kill the server, cut a {@link TcpProxy}). Returns
     * promptly.
     *
     * @throws Exception if the store could not be stopped
     */
    protected abstract void stopStore() throws Exception;

    /**
     * Makes the store reachable again, with its data if it persists any; returns when it answers.
     *
     * @throws Exception if the store could not be started
     */
    protected abstract void startStore() throws Exception;

    /**
     * The short lease time used by expiry tests. Stores that cannot expire faster may raise it.
     *
     * @return a lease time of about a second
     */
    protected Duration shortLease() {
        return Duration.ofMillis(1500);
    }

    /**
     * The operation timeout the suite configures, and the bound for "the store is down" failures.
     *
     * @return a timeout of a few seconds
     */
    protected Duration operationTimeout() {
        return Duration.ofSeconds(2);
    }

    /**
     * Whether the store offers fair locks. A store that does not must refuse {@code fairLock()} with
     * {@link UnsupportedOperationException}; the fair-lock cases then assert that refusal instead.
     *
     * @return true by default
     */
    protected boolean offersFairLocks() {
        return true;
    }

    /**
     * Whether the store offers semaphores; see {@link #offersFairLocks()}.
     *
     * @return true by default
     */
    protected boolean offersSemaphores() {
        return true;
    }

    /** For a store without fair locks: asserts that {@code fairLock()} is refused, and returns true. */
    private boolean fairLocksRefused() {
        if (offersFairLocks()) {
            return false;
        }
        assertThatThrownBy(() -> client().fairLock("refused"))
                .isInstanceOf(UnsupportedOperationException.class)
                .hasMessageContaining("fair");
        return true;
    }

    /** For a store without semaphores: asserts that {@code semaphore()} is refused, and returns true. */
    private boolean semaphoresRefused() {
        if (offersSemaphores()) {
            return false;
        }
        assertThatThrownBy(() -> client().semaphore("refused", 2))
                .isInstanceOf(UnsupportedOperationException.class)
                .hasMessageContaining("semaphore");
        return true;
    }

    @BeforeEach
    void newNamespace() {
        namespace = "tck" + Long.toHexString(ThreadLocalRandom.current().nextLong() & 0xffffffffL);
    }

    @AfterEach
    void closeClients() {
        for (LockClient c : clients) {
            c.close();
        }
        clients.clear();
        freezable.clear();
    }

    /**
     * A new client in this test's namespace.
     *
     * @return a client closed after the test
     */
    protected final LockClient client() {
        return client(b -> {});
    }

    /**
     * A new client in this test's namespace, with extra options.
     *
     * @param options changes to the builder
     * @return a client closed after the test
     */
    protected final LockClient client(Consumer<LockClient.Builder> options) {
        AtomicReference<FreezableBackend> wrapper = new AtomicReference<>();
        LockClient.Builder b = newClientBuilder().namespace(namespace).operationTimeout(operationTimeout());
        b.backend(b.backend().andThen(backend -> {
            wrapper.set(new FreezableBackend(backend));
            return wrapper.get();
        }));
        options.accept(b);
        LockClient c = b.build();
        clients.add(c);
        freezable.put(c, wrapper.get());
        return c;
    }

    private LockClient crashableClient() {
        // A holder that "crashes": it never renews and never releases.
        return client(b -> b.leaseTime(shortLease()).renewal(false));
    }

    private static void runThreads(int threads, ThrowingRunnable body) throws Exception {
        List<Thread> list = new ArrayList<>();
        List<Throwable> errors = Collections.synchronizedList(new ArrayList<>());
        CountDownLatch start = new CountDownLatch(1);
        for (int i = 0; i < threads; i++) {
            Thread t = new Thread(() -> {
                try {
                    start.await();
                    body.run();
                } catch (Throwable e) {
                    errors.add(e);
                }
            });
            t.start();
            list.add(t);
        }
        start.countDown();
        for (Thread t : list) {
            t.join(TimeUnit.SECONDS.toMillis(100));
            assertThat(t.isAlive()).as("worker thread finished").isFalse();
        }
        if (!errors.isEmpty()) {
            AssertionError e = new AssertionError(errors.size() + " worker(s) failed; first: " + errors.get(0));
            errors.forEach(e::addSuppressed);
            throw e;
        }
    }

    /** A body that may throw. */
    @FunctionalInterface
    protected interface ThrowingRunnable {
        /**
         * Runs.
         *
         * @throws Exception anything
         */
        void run() throws Exception;
    }

    private static long millisSince(long startNanos) {
        return TimeUnit.NANOSECONDS.toMillis(System.nanoTime() - startNanos);
    }

    private static void sleep(Duration d) throws InterruptedException {
        Thread.sleep(d.toMillis());
    }

    private static void awaitTrue(Duration max, java.util.function.BooleanSupplier condition)
            throws InterruptedException {
        long deadline = System.nanoTime() + max.toNanos();
        while (!condition.getAsBoolean()) {
            assertThat(System.nanoTime() - deadline)
                    .as("condition met within %s", max)
                    .isNegative();
            Thread.sleep(10);
        }
    }

    // ------------------------------------------------------------------ exclusive basics

    @Test
    void tryAcquireOnFreeLockSucceeds() {
        Optional<Lease> lease = client().lock("free").tryAcquire();
        assertThat(lease).isPresent();
        assertThat(lease.get().isValid()).isTrue();
        assertThat(lease.get().name()).isEqualTo("free");
        lease.get().close();
    }

    @Test
    void secondClientCannotAcquireWhileHeld() {
        LockClient a = client();
        LockClient b = client();
        try (Lease held = a.lock("busy").acquire(LONG_WAIT)) {
            assertThat(b.lock("busy").tryAcquire()).isEmpty();
            assertThat(held.isValid()).isTrue();
        }
    }

    @Test
    void releaseLetsAnotherClientAcquire() {
        LockClient a = client();
        LockClient b = client();
        Lease held = a.lock("handover").acquire(LONG_WAIT);
        held.close();
        assertThat(held.isValid()).isFalse();
        Optional<Lease> next = b.lock("handover").tryAcquire();
        assertThat(next).isPresent();
        next.get().close();
    }

    @Test
    void releaseIsIdempotent() {
        LockClient a = client();
        Lease lease = a.lock("twice").acquire(LONG_WAIT);
        lease.close();
        lease.close();
        Lease other = client().lock("twice").acquire(LONG_WAIT);
        lease.close(); // must not free the new holder's lock
        assertThat(client().lock("twice").tryAcquire()).isEmpty();
        other.close();
    }

    @Test
    void leaseCanBeReleasedFromAnotherThread() throws Exception {
        LockClient a = client();
        Lease lease = a.lock("cross-thread").acquire(LONG_WAIT);
        Thread t = new Thread(lease::close);
        t.start();
        t.join();
        assertThat(lease.isValid()).isFalse();
        assertThat(client().lock("cross-thread").tryAcquire()).isPresent();
    }

    @Test
    void leaseApiIsNotReentrant() {
        DistributedLock lock = client().lock("lease-not-reentrant");
        try (Lease first = lock.acquire(LONG_WAIT)) {
            assertThat(lock.tryAcquire()).isEmpty();
            assertThat(first.isValid()).isTrue();
        }
    }

    @Test
    void locksWithDifferentNamesAreIndependent() {
        LockClient a = client();
        try (Lease x = a.lock("x").acquire(LONG_WAIT);
                Lease y = client().lock("y").acquire(LONG_WAIT)) {
            assertThat(x.isValid()).isTrue();
            assertThat(y.isValid()).isTrue();
        }
    }

    @Test
    void namespacesAreIsolated() {
        LockClient a = client(b -> b.namespace(namespace + "-a"));
        LockClient b = client(x -> x.namespace(namespace + "-b"));
        try (Lease x = a.lock("shared-name").acquire(LONG_WAIT);
                Lease y = b.lock("shared-name").acquire(LONG_WAIT)) {
            assertThat(x.isValid() && y.isValid()).isTrue();
        }
    }

    @Test
    void namesWithSpecialCharactersAreDistinctAndWork() {
        List<String> names = List.of(
                "a:b",
                "a",
                "a:b:c",
                "{slot}",
                "}{",
                "a/b",
                "a\\b",
                "'; DROP TABLE x; --",
                "\"quoted\"",
                "with space",
                "ünïcødé-名前-🔒",
                "%",
                "_",
                "*",
                "..",
                "/",
                "\n\t");
        LockClient a = client();
        LockClient b = client();
        List<Lease> leases = new ArrayList<>();
        for (String n : names) {
            Lease lease = a.lock(n).acquire(LONG_WAIT);
            assertThat(lease.name()).isEqualTo(n);
            leases.add(lease);
        }
        for (String n : names) {
            assertThat(b.lock(n).tryAcquire()).as("'%s' is held", n).isEmpty();
        }
        leases.forEach(Lease::close);
        for (String n : names) {
            Optional<Lease> again = b.lock(n).tryAcquire();
            assertThat(again).as("'%s' is free after release", n).isPresent();
            again.get().close();
        }
    }

    @Test
    void longestNameIsAccepted() {
        String name = "n".repeat(1000) + "é".repeat(12); // exactly 1,024 UTF-8 bytes
        assertThat(name.getBytes(StandardCharsets.UTF_8)).hasSize(1024);
        LockClient a = client();
        try (Lease lease = a.lock(name).acquire(LONG_WAIT)) {
            assertThat(client().lock(name).tryAcquire()).isEmpty();
            assertThat(lease.name()).isEqualTo(name);
        }
        String other = "n".repeat(1000) + "é".repeat(11) + "x" + "y";
        try (Lease lease = client().lock(other).acquire(LONG_WAIT)) {
            assertThat(lease.isValid())
                    .as("a name differing only at the end is another lock")
                    .isTrue();
        }
    }

    // ------------------------------------------------------------------ Lock view: reentrancy, ownership

    @Test
    void lockIsReentrantAndCountsHolds() {
        LockClient a = client();
        DistributedLock lock = a.lock("reentrant");
        lock.lock();
        lock.lock();
        assertThat(lock.isHeldByCurrentThread()).isTrue();
        lock.unlock();
        assertThat(lock.isHeldByCurrentThread()).isTrue();
        assertThat(client().lock("reentrant").tryAcquire())
                .as("still held after one unlock")
                .isEmpty();
        lock.unlock();
        assertThat(lock.isHeldByCurrentThread()).isFalse();
        Optional<Lease> other = client().lock("reentrant").tryAcquire();
        assertThat(other).as("free after the last unlock").isPresent();
        other.get().close();
    }

    @Test
    void reentrantAcquisitionKeepsTheHoldersToken() {
        DistributedLock lock = client().lock("reentrant-token");
        lock.lock();
        long token = lock.currentLease().orElseThrow().fencingToken();
        lock.lock();
        assertThat(lock.currentLease().orElseThrow().fencingToken()).isEqualTo(token);
        client().lock("reentrant-token"); // another view of the same name shares the hold
        assertThat(client().lock("other-name").isHeldByCurrentThread()).isFalse();
        lock.unlock();
        lock.unlock();
    }

    @Test
    void viewsOfOneNameInOneClientShareTheThreadHold() {
        LockClient a = client();
        a.lock("views").lock();
        DistributedLock second = a.lock("views");
        assertThat(second.isHeldByCurrentThread()).isTrue();
        assertThat(second.tryLock()).as("reentrant through another view").isTrue();
        second.unlock();
        second.unlock();
        assertThat(a.lock("views").isHeldByCurrentThread()).isFalse();
    }

    @Test
    void unlockByAThreadThatDoesNotHoldItThrows() throws Exception {
        DistributedLock lock = client().lock("owned");
        lock.lock();
        AtomicReference<Throwable> error = new AtomicReference<>();
        Thread t = new Thread(() -> {
            try {
                lock.unlock();
            } catch (Throwable e) {
                error.set(e);
            }
        });
        t.start();
        t.join();
        assertThat(error.get()).isInstanceOf(IllegalMonitorStateException.class).hasMessageContaining("owned");
        assertThat(lock.isHeldByCurrentThread()).isTrue();
        lock.unlock();
    }

    @Test
    void unlockWithoutLockThrows() {
        assertThatThrownBy(() -> client().lock("never-locked").unlock())
                .isInstanceOf(IllegalMonitorStateException.class)
                .hasMessageContaining("never-locked");
    }

    @Test
    void newConditionIsUnsupported() {
        assertThatThrownBy(() -> client().lock("cond").newCondition())
                .isInstanceOf(UnsupportedOperationException.class)
                .hasMessageContaining("condition");
    }

    @Test
    void tryLockReturnsFalseWhenHeldElsewhere() {
        try (Lease held = client().lock("trylock").acquire(LONG_WAIT)) {
            DistributedLock lock = client().lock("trylock");
            assertThat(lock.tryLock()).isFalse();
            assertThat(lock.isHeldByCurrentThread()).isFalse();
            assertThat(held.isValid()).isTrue();
        }
    }

    @Test
    void timedTryLockReturnsWithinTheWaitPlusAMargin() throws Exception {
        try (Lease held = client().lock("timed").acquire(LONG_WAIT)) {
            DistributedLock lock = client().lock("timed");
            long start = System.nanoTime();
            assertThat(lock.tryLock(700, TimeUnit.MILLISECONDS)).isFalse();
            assertThat(millisSince(start)).isBetween(650L, 700L + 1500L);
            assertThat(held.isValid()).isTrue();
        }
    }

    @Test
    void acquireTimesOutWithLockTimeoutException() {
        try (Lease held = client().lock("timeout").acquire(LONG_WAIT)) {
            long start = System.nanoTime();
            assertThatThrownBy(() -> client().lock("timeout").acquire(Duration.ofMillis(600)))
                    .isInstanceOf(LockTimeoutException.class)
                    .hasMessageContaining("timeout");
            assertThat(millisSince(start)).isBetween(550L, 600L + 1500L);
            assertThat(held.isValid()).isTrue();
        }
    }

    @Test
    void lockInterruptiblyRespondsToInterruptAndLeavesNothingHeld() throws Exception {
        LockClient holder = client();
        Lease held = holder.lock("interrupt").acquire(LONG_WAIT);
        DistributedLock lock = client().lock("interrupt");
        AtomicReference<Throwable> outcome = new AtomicReference<>();
        Thread waiter = new Thread(() -> {
            try {
                lock.lockInterruptibly();
                outcome.set(new AssertionError("acquired although held elsewhere"));
            } catch (Throwable e) {
                outcome.set(e);
            }
        });
        waiter.start();
        Thread.sleep(300);
        waiter.interrupt();
        waiter.join(5_000);
        assertThat(waiter.isAlive()).isFalse();
        assertThat(outcome.get()).isInstanceOf(InterruptedException.class);
        held.close();
        Optional<Lease> next = client().lock("interrupt").tryAcquire();
        assertThat(next).as("the interrupted waiter holds nothing").isPresent();
        next.get().close();
    }

    @Test
    void lockIgnoresInterruptsAndKeepsWaiting() throws Exception {
        Lease held = client().lock("uninterruptible").acquire(LONG_WAIT);
        DistributedLock lock = client().lock("uninterruptible");
        AtomicReference<Object> outcome = new AtomicReference<>();
        Thread waiter = new Thread(() -> {
            try {
                lock.lock();
                outcome.set(Thread.currentThread().isInterrupted() ? "locked, still interrupted" : "locked");
                lock.unlock();
            } catch (Throwable e) {
                outcome.set(e);
            }
        });
        waiter.start();
        Thread.sleep(300);
        waiter.interrupt();
        Thread.sleep(500);
        assertThat(outcome.get()).as("lock() keeps waiting after an interrupt").isNull();
        held.close();
        waiter.join(15_000);
        assertThat(outcome.get()).isEqualTo("locked, still interrupted");
    }

    @Test
    void waiterIsWokenPromptlyByReleaseNotByLeaseExpiry() throws Exception {
        LockClient a = client(b -> b.leaseTime(Duration.ofSeconds(30)));
        Lease held = a.lock("wakeup").acquire(LONG_WAIT);
        CompletableFuture<Lease> waiting = client().lock("wakeup").acquireAsync(LONG_WAIT);
        Thread.sleep(500);
        assertThat(waiting).isNotDone();
        long released = System.nanoTime();
        held.close();
        Lease next = waiting.get(10, TimeUnit.SECONDS);
        assertThat(millisSince(released))
                .as("woken by the release, long before the 30 s lease would expire")
                .isLessThan(5_000);
        next.close();
    }

    // ------------------------------------------------------------------ fuzz with exact totals

    @Test
    void exclusiveLockFuzzKeepsExactTotals() throws Exception {
        int clientsCount = 3;
        int threadsPerClient = 3;
        int iterations = 15;
        History history = new History();
        int[] counter = {0};
        List<LockClient> cs = new ArrayList<>();
        for (int i = 0; i < clientsCount; i++) {
            cs.add(client());
        }
        AtomicInteger next = new AtomicInteger();
        runThreads(clientsCount * threadsPerClient, () -> {
            LockClient c = cs.get(next.getAndIncrement() % clientsCount);
            DistributedLock lock = c.lock("fuzz");
            for (int i = 0; i < iterations; i++) {
                if (i % 2 == 0) {
                    lock.lock();
                    try {
                        long token = lock.currentLease().orElseThrow().fencingToken();
                        history.record("fuzz", token, Thread.currentThread().getName(), () -> {
                            int v = counter[0];
                            Thread.onSpinWait();
                            counter[0] = v + 1;
                        });
                    } finally {
                        lock.unlock();
                    }
                } else {
                    try (Lease lease = lock.acquire(LONG_WAIT)) {
                        history.record(
                                "fuzz",
                                lease.fencingToken(),
                                Thread.currentThread().getName(),
                                () -> {
                                    int v = counter[0];
                                    Thread.onSpinWait();
                                    counter[0] = v + 1;
                                });
                    }
                }
            }
        });
        assertThat(counter[0]).isEqualTo(clientsCount * threadsPerClient * iterations);
        assertThat(history.size()).isEqualTo(clientsCount * threadsPerClient * iterations);
        history.assertExclusive();
    }

    /**
     * Cohort hand-off (on by default): threads of two clients loop over one lock. Holders never overlap,
     * tokens increase in grant order, and each grant is either a pass inside one client (previous token
     * + 1, inside the room of its store grant) or a store grant at least {@code LockBackend.tokenBlock()}
     * above the previous store grant, the room the store promised. A store that reserves room must
     * actually have passed holds here.
     */
    @Test
    void localHandOffKeepsTokensBetweenStoreGrants() throws Exception {
        List<LockClient> cs = List.of(client(), client());
        long block = freezable.get(cs.get(0)).tokenBlock();
        History history = new History();
        AtomicInteger next = new AtomicInteger();
        runThreads(6, () -> {
            DistributedLock lock = cs.get(next.getAndIncrement() % 2).lock("cohort");
            for (int i = 0; i < 15; i++) {
                lock.lock();
                try {
                    history.record(
                            "cohort",
                            lock.currentLease().orElseThrow().fencingToken(),
                            Thread.currentThread().getName(),
                            () -> {});
                } finally {
                    lock.unlock();
                }
            }
        });
        history.assertExclusive();
        List<Long> tokens = history.intervals().stream()
                .sorted(java.util.Comparator.comparingLong(History.Interval::startNanos))
                .map(History.Interval::token)
                .toList();
        int passes = 0;
        long storeGrant = tokens.get(0); // a fresh name: the first grant comes from the store
        for (int i = 1; i < tokens.size(); i++) {
            if (tokens.get(i) - storeGrant < block) {
                assertThat(tokens.get(i))
                        .as("a token inside the room of store grant %d is a pass: previous + 1", storeGrant)
                        .isEqualTo(tokens.get(i - 1) + 1);
                passes++;
            } else {
                storeGrant = tokens.get(i);
            }
        }
        if (block > 1) {
            assertThat(passes).as("holds passed between threads of one client").isPositive();
        }
    }

    @Test
    void fencingTokensStrictlyIncreaseAcrossHoldersAndClients() {
        List<LockClient> cs = List.of(client(), client(), client());
        long last = Long.MIN_VALUE;
        for (int i = 0; i < 12; i++) {
            try (Lease lease = cs.get(i % 3).lock("tokens").acquire(LONG_WAIT)) {
                assertThat(lease.fencingToken()).isGreaterThan(last);
                last = lease.fencingToken();
            }
        }
    }

    // ------------------------------------------------------------------ leases, expiry, lost signal

    @Test
    void crashedHoldersLeaseExpiresAndAnotherClientAcquires() throws Exception {
        LockClient crashed = crashableClient();
        Lease abandoned = crashed.lock("crash").acquire(LONG_WAIT);
        long start = System.nanoTime();
        Lease next = client().lock("crash").acquire(Duration.ofSeconds(30));
        long waited = millisSince(start);
        assertThat(waited)
                .as("the other client waits for the lease to run out")
                .isGreaterThanOrEqualTo(shortLease().toMillis() / 2);
        assertThat(next.fencingToken()).isGreaterThan(abandoned.fencingToken());
        assertThat(abandoned.isValid()).isFalse();
        next.close();
    }

    @Test
    void lostSignalFiresWhenALeaseRunsOutWithoutRenewal() throws Exception {
        LockClient c = crashableClient();
        Lease lease = c.lock("lost-signal").acquire(LONG_WAIT);
        assertThat(lease.whenLost()).isNotDone();
        LeaseLostException signal = lease.whenLost().get(shortLease().toMillis() + 5_000, TimeUnit.MILLISECONDS);
        assertThat(signal).hasMessageContaining("lost-signal");
        assertThat(lease.isValid()).isFalse();
        assertThatThrownBy(lease::checkValid).isInstanceOf(LeaseLostException.class);
        assertThat(lease.remaining()).isEqualTo(Duration.ZERO);
    }

    @Test
    void renewalKeepsALeaseBeyondItsLeaseTime() throws Exception {
        LockClient c = client(b -> b.leaseTime(shortLease()));
        try (Lease lease = c.lock("renewed").acquire(LONG_WAIT)) {
            sleep(shortLease().multipliedBy(3));
            assertThat(lease.isValid()).isTrue();
            assertThat(lease.whenLost()).isNotDone();
            assertThat(client().lock("renewed").tryAcquire()).isEmpty();
        }
    }

    @Test
    void remainingIsPositiveAndBoundedByTheLeaseTime() {
        LockClient c = client(b -> b.leaseTime(Duration.ofSeconds(10)));
        try (Lease lease = c.lock("remaining").acquire(LONG_WAIT)) {
            assertThat(lease.remaining()).isPositive().isLessThanOrEqualTo(Duration.ofSeconds(10));
        }
    }

    @Test
    void extendProlongsALeaseWithoutRenewal() throws Exception {
        LockClient c = crashableClient();
        Lease lease = c.lock("extend").acquire(LONG_WAIT);
        lease.extend(shortLease().multipliedBy(4));
        sleep(shortLease().multipliedBy(2));
        assertThat(lease.isValid()).isTrue();
        assertThat(client().lock("extend").tryAcquire()).isEmpty();
        lease.close();
        assertThatThrownBy(() -> lease.extend(Duration.ofSeconds(1))).isInstanceOf(LeaseLostException.class);
    }

    @Test
    void unlockOfALostLockThrowsLeaseLost() throws Exception {
        LockClient c = crashableClient();
        DistributedLock lock = c.lock("lost-unlock");
        lock.lock();
        Lease lease = lock.currentLease().orElseThrow();
        lease.whenLost().get(shortLease().toMillis() + 5_000, TimeUnit.MILLISECONDS);
        assertThatThrownBy(lock::unlock).isInstanceOf(LeaseLostException.class).hasMessageContaining("lost-unlock");
        assertThat(lock.isHeldByCurrentThread()).isFalse();
    }

    @Test
    void closeCancelsTheLostSignal() {
        Lease lease = client().lock("cancel-signal").acquire(LONG_WAIT);
        lease.close();
        assertThat(lease.whenLost()).isCancelled();
        assertThatThrownBy(lease::checkValid)
                .isInstanceOf(LeaseLostException.class)
                .hasMessageContaining("released");
    }

    @Test
    void forceReleaseIsNoticedByTheHolderAsALoss() throws Exception {
        LockClient holder = client(b -> b.leaseTime(shortLease()));
        Lease lease = holder.lock("forced").acquire(LONG_WAIT);
        LockClient admin = client();
        assertThat(admin.forceRelease("forced")).isTrue();
        LeaseLostException signal = lease.whenLost().get(shortLease().toMillis() + 5_000, TimeUnit.MILLISECONDS);
        assertThat(signal).hasMessageContaining("forced");
        try (Lease next = admin.lock("forced").acquire(LONG_WAIT)) {
            assertThat(next.fencingToken()).isGreaterThan(lease.fencingToken());
        }
    }

    // ------------------------------------------------------------------ store failures

    @Test
    void storeDownMakesAcquireFailWithinTheTimeout() throws Exception {
        LockClient c = client();
        c.lock("warm").tryAcquire().ifPresent(Lease::close);
        stopStore();
        try {
            long start = System.nanoTime();
            assertThatThrownBy(() -> c.lock("down").acquire(Duration.ofSeconds(30)))
                    .isInstanceOf(LockBackendException.class);
            assertThat(millisSince(start)).isLessThan(operationTimeout().toMillis() + 3_000);
        } finally {
            startStore();
        }
    }

    @Test
    void storeDownMakesHeldLeasesLostWithinTheLeaseTime() throws Exception {
        LockClient c = client(b -> b.leaseTime(shortLease()));
        Lease lease = c.lock("down-held").acquire(LONG_WAIT);
        stopStore();
        try {
            long start = System.nanoTime();
            LeaseLostException signal = lease.whenLost()
                    .get(shortLease().toMillis() + operationTimeout().toMillis() + 10_000, TimeUnit.MILLISECONDS);
            assertThat(signal).hasMessageContaining("down-held");
            assertThat(millisSince(start))
                    .isLessThan(shortLease().toMillis() + operationTimeout().toMillis() + 5_000);
            assertThat(lease.isValid()).isFalse();
        } finally {
            startStore();
        }
    }

    @Test
    void clientWorksAgainAfterTheStoreReturns() throws Exception {
        // A short lease: an attempt made during the outage may still be granted by a store that comes
        // back (e.g. a command a client library sends after reconnecting) with nobody listening; such a
        // grant must expire by its lease time, within the 5 s waits below.
        LockClient c = client(b -> b.leaseTime(shortLease()));
        c.lock("recover").acquire(LONG_WAIT).close();
        stopStore();
        try {
            assertThatThrownBy(() -> c.lock("recover").acquire(Duration.ofSeconds(1)))
                    .isInstanceOf(LockException.class);
        } finally {
            startStore();
        }
        long deadline = System.nanoTime() + TimeUnit.SECONDS.toNanos(30);
        while (true) {
            try (Lease lease = c.lock("recover").acquire(Duration.ofSeconds(5))) {
                assertThat(lease.isValid()).isTrue();
                break;
            } catch (LockBackendException e) {
                assertThat(System.nanoTime() - deadline)
                        .as("client recovered within 30 s: " + e)
                        .isNegative();
                Thread.sleep(200);
            }
        }
    }

    // ------------------------------------------------------------------ async

    @Test
    void asyncAcquireCompletesWithALease() throws Exception {
        Lease lease = client().lock("async").acquireAsync(LONG_WAIT).get(20, TimeUnit.SECONDS);
        assertThat(lease.isValid()).isTrue();
        assertThat(client().lock("async").tryAcquire()).isEmpty();
        lease.close();
    }

    @Test
    void cancellingAnAsyncAcquireLeavesNoHolderBehind() throws Exception {
        Lease held = client().lock("cancel").acquire(LONG_WAIT);
        CompletableFuture<Lease> waiting = client().lock("cancel").acquireAsync(LONG_WAIT);
        Thread.sleep(300);
        assertThat(waiting.cancel(true)).isTrue();
        held.close();
        Thread.sleep(300);
        Optional<Lease> next = client().lock("cancel").tryAcquire();
        assertThat(next).as("the cancelled waiter did not take the lock").isPresent();
        next.get().close();
        assertThatThrownBy(waiting::get).isInstanceOf(CancellationException.class);
    }

    @Test
    void aCancelledFairWaiterDoesNotHoldUpTheFairQueue() throws Exception {
        if (fairLocksRefused()) {
            return;
        }
        Lease held = client().fairLock("fair-cancel").acquire(LONG_WAIT);
        CompletableFuture<Lease> waiting = client().fairLock("fair-cancel").acquireAsync(LONG_WAIT);
        Thread.sleep(300); // queued in the store
        assertThat(waiting.cancel(true)).isTrue();
        Thread.sleep(300);
        held.close();
        LockClient third = client();
        awaitTrue(Duration.ofSeconds(5), () -> {
            Optional<Lease> next = third.fairLock("fair-cancel").tryAcquire();
            next.ifPresent(Lease::close);
            return next.isPresent();
        });
    }

    @Test
    void aCancelledWriterDoesNotHoldNewReadersBack() throws Exception {
        Lease read = client().readWriteLock("writer-cancel").readLock().acquire(LONG_WAIT);
        CompletableFuture<Lease> writer =
                client().readWriteLock("writer-cancel").writeLock().acquireAsync(LONG_WAIT);
        Thread.sleep(300); // queued in the store, holding new readers back
        assertThat(writer.cancel(true)).isTrue();
        LockClient reader = client();
        awaitTrue(Duration.ofSeconds(5), () -> {
            Optional<Lease> next =
                    reader.readWriteLock("writer-cancel").readLock().tryAcquire();
            next.ifPresent(Lease::close);
            return next.isPresent();
        });
        read.close();
    }

    @Test
    void asyncAcquireTimesOutExceptionally() {
        try (Lease held = client().lock("async-timeout").acquire(LONG_WAIT)) {
            CompletableFuture<Lease> waiting = client().lock("async-timeout").acquireAsync(Duration.ofMillis(400));
            assertThatThrownBy(() -> waiting.get(10, TimeUnit.SECONDS))
                    .isInstanceOf(ExecutionException.class)
                    .hasCauseInstanceOf(LockTimeoutException.class);
            assertThat(held.isValid()).isTrue();
        }
    }

    @Test
    void manyAsyncWaitersAreServedOneAtATime() throws Exception {
        LockClient c = client();
        DistributedLock lock = c.lock("async-many");
        History history = new History();
        List<CompletableFuture<Void>> all = new ArrayList<>();
        for (int i = 0; i < 20; i++) {
            all.add(lock.acquireAsync(LONG_WAIT).thenAccept(lease -> {
                try (lease) {
                    history.record("async-many", lease.fencingToken(), "async", () -> {});
                }
            }));
        }
        CompletableFuture.allOf(all.toArray(CompletableFuture[]::new)).get(60, TimeUnit.SECONDS);
        assertThat(history.size()).isEqualTo(20);
        history.assertExclusive();
    }

    // ------------------------------------------------------------------ client lifecycle

    @Test
    void closeReleasesEveryLease() {
        LockClient a = client();
        a.lock("close-1").acquire(LONG_WAIT);
        a.lock("close-2").lock();
        if (offersSemaphores()) {
            a.semaphore("close-3", 1).acquire(LONG_WAIT);
        } else {
            a.readWriteLock("close-3").writeLock().acquire(LONG_WAIT);
        }
        assertThat(a.heldLeases()).hasSize(3);
        a.close();
        LockClient b = client();
        for (String n : List.of("close-1", "close-2")) {
            Optional<Lease> lease = b.lock(n).tryAcquire();
            assertThat(lease).as("'%s' released by close()", n).isPresent();
            lease.get().close();
        }
        assertThat(
                        offersSemaphores()
                                ? b.semaphore("close-3", 1).tryAcquire()
                                : b.readWriteLock("close-3").writeLock().tryAcquire())
                .isPresent();
    }

    @Test
    void closeFailsPendingWaits() throws Exception {
        Lease held = client().lock("close-wait").acquire(LONG_WAIT);
        LockClient waiter = client();
        CompletableFuture<Lease> waiting = waiter.lock("close-wait").acquireAsync(LONG_WAIT);
        Thread.sleep(200);
        waiter.close();
        assertThatThrownBy(() -> waiting.get(10, TimeUnit.SECONDS))
                .isInstanceOf(ExecutionException.class)
                .hasCauseInstanceOf(LockException.class);
        held.close();
    }

    @Test
    void useAfterCloseThrows() {
        LockClient a = client();
        a.close();
        assertThatThrownBy(() -> a.lock("closed").tryAcquire())
                .isInstanceOf(LockException.class)
                .hasMessageContaining("closed");
    }

    @Test
    void closeLeavesNoThreadsBehind() throws Exception {
        // Warm up shared, JVM-wide threads (common pool, client library event loops started lazily).
        LockClient warm = client();
        warm.lock("threads").acquire(LONG_WAIT).close();
        warm.close();
        Thread.sleep(500);
        int before = nonPoolThreads();
        for (int i = 0; i < 3; i++) {
            LockClient c = client(b -> b.leaseTime(shortLease()));
            Lease l = c.lock("threads").acquire(LONG_WAIT);
            CompletableFuture<Lease> w = c.lock("threads").acquireAsync(Duration.ofSeconds(5));
            Thread.sleep(100);
            l.close();
            w.get(10, TimeUnit.SECONDS).close();
            c.close();
        }
        awaitTrue(Duration.ofSeconds(10), () -> nonPoolThreads() <= before);
        assertThat(Thread.getAllStackTraces().keySet().stream()
                        .filter(t -> t.getName().startsWith("dlock-"))
                        .count())
                .isZero();
    }

    private static int nonPoolThreads() {
        return (int) Thread.getAllStackTraces().keySet().stream()
                .filter(Thread::isAlive)
                .filter(t -> !t.getName().startsWith("ForkJoinPool"))
                .count();
    }

    @Test
    void heldLeasesListsWhatThisClientHolds() {
        LockClient a = client();
        try (Lease x = a.lock("held-1").acquire(LONG_WAIT);
                Lease y = (offersFairLocks()
                                ? a.fairLock("held-2")
                                : a.readWriteLock("held-2").readLock())
                        .acquire(LONG_WAIT)) {
            assertThat(a.heldLeases()).extracting(Lease::name).containsExactlyInAnyOrder("held-1", "held-2");
            assertThat(x.isValid() && y.isValid()).isTrue();
        }
        assertThat(a.heldLeases()).isEmpty();
    }

    @Test
    void describeAndListShowHoldersAndTokens() {
        LockClient a = client();
        try (Lease lease = a.lock("described").acquire(LONG_WAIT)) {
            List<LockInfo> infos = client().describe("described");
            assertThat(infos).hasSize(1);
            LockInfo info = infos.get(0);
            assertThat(info.name()).isEqualTo("described");
            assertThat(info.holders()).hasSize(1);
            assertThat(info.holders().get(0).fencingToken()).isEqualTo(lease.fencingToken());
            assertThat(client().list("descr")).extracting(LockInfo::name).contains("described");
            assertThat(client().list("zzz")).isEmpty();
        }
        assertThat(client().describe("described")).isEmpty();
    }

    // ------------------------------------------------------------------ bad input

    @Test
    void badNamesAreRejectedWithAClearMessage() {
        LockClient a = client();
        assertThatThrownBy(() -> a.lock(null))
                .isInstanceOf(IllegalArgumentException.class)
                .hasMessageContaining("null");
        assertThatThrownBy(() -> a.lock(""))
                .isInstanceOf(IllegalArgumentException.class)
                .hasMessageContaining("empty");
        assertThatThrownBy(() -> a.lock("x".repeat(1025)))
                .isInstanceOf(IllegalArgumentException.class)
                .hasMessageContaining("1025")
                .hasMessageContaining("1024");
        assertThatThrownBy(() -> a.lock("é".repeat(513)))
                .as("the limit counts UTF-8 bytes, not characters")
                .isInstanceOf(IllegalArgumentException.class);
        assertThatThrownBy(() -> a.lock("nul\0"))
                .isInstanceOf(IllegalArgumentException.class)
                .hasMessageContaining("NUL");
        assertThatThrownBy(() -> a.lock("\uD800"))
                .isInstanceOf(IllegalArgumentException.class)
                .hasMessageContaining("surrogate");
        assertThatThrownBy(() -> a.multiLock()).isInstanceOf(IllegalArgumentException.class);
        assertThatThrownBy(() -> a.multiLock("ok", "")).isInstanceOf(IllegalArgumentException.class);
    }

    @Test
    void adminCallsRejectBadNamesAsBadInput() {
        LockClient a = client();
        assertThatThrownBy(() -> a.describe(""))
                .isInstanceOf(IllegalArgumentException.class)
                .hasMessageContaining("empty");
        assertThatThrownBy(() -> a.forceRelease(null)).isInstanceOf(IllegalArgumentException.class);
        assertThatThrownBy(() -> a.list(null)).isInstanceOf(IllegalArgumentException.class);
    }

    @Test
    void badDurationsAndCountsAreRejected() {
        LockClient a = client();
        assertThatThrownBy(() -> a.lock("d").acquire(Duration.ofMillis(-1)))
                .isInstanceOf(IllegalArgumentException.class)
                .hasMessageContaining("negative");
        assertThatThrownBy(() -> a.lock("d").acquire(null)).isInstanceOf(IllegalArgumentException.class);
        assertThatThrownBy(() -> a.lock("d").withLeaseTime(Duration.ZERO))
                .isInstanceOf(IllegalArgumentException.class)
                .hasMessageContaining("leaseTime");
        assertThatThrownBy(() -> a.semaphore("s", 0))
                .isInstanceOf(IllegalArgumentException.class)
                .hasMessageContaining("permits");
        assertThatThrownBy(() -> a.semaphore("s", -3)).isInstanceOf(IllegalArgumentException.class);
        assertThatThrownBy(() -> newClientBuilder().leaseTime(Duration.ofSeconds(-1)))
                .isInstanceOf(IllegalArgumentException.class);
        assertThatThrownBy(() -> newClientBuilder().operationTimeout(Duration.ZERO))
                .isInstanceOf(IllegalArgumentException.class);
        assertThatThrownBy(() -> newClientBuilder().localQueueLimit(0)).isInstanceOf(IllegalArgumentException.class);
        assertThatThrownBy(() -> newClientBuilder().namespace("has space"))
                .isInstanceOf(IllegalArgumentException.class);
        try (Lease lease = a.lock("d").acquire(LONG_WAIT)) {
            assertThatThrownBy(() -> lease.extend(Duration.ofSeconds(-1))).isInstanceOf(IllegalArgumentException.class);
        }
    }

    @Test
    void durationsTooLongToComputeWithAreRejected() {
        Duration forever = Duration.ofSeconds(Long.MAX_VALUE);
        assertThatThrownBy(() -> newClientBuilder().leaseTime(forever))
                .isInstanceOf(IllegalArgumentException.class)
                .hasMessageContaining("leaseTime");
        assertThatThrownBy(() -> newClientBuilder().operationTimeout(forever))
                .isInstanceOf(IllegalArgumentException.class)
                .hasMessageContaining("operationTimeout");
        try (Lease lease = client().lock("forever").acquire(forever)) {
            assertThatThrownBy(() -> lease.extend(forever)).isInstanceOf(IllegalArgumentException.class);
            assertThat(lease.isValid()).isTrue();
        }
    }

    @Test
    void unknownUriSchemeIsRejected() {
        assertThatThrownBy(() -> LockClient.connect("nosuchstore://user:sentinel-secret@x"))
                .isInstanceOf(IllegalArgumentException.class)
                .hasMessageContaining("nosuchstore:")
                .hasMessageNotContaining("sentinel-secret"); // the rest of a URI may hold a password
    }

    // ------------------------------------------------------------------ local queue

    @Test
    void localQueueLimitShedsLoad() throws Exception {
        Lease held = client().lock("shed").acquire(LONG_WAIT);
        List<String> events = new CopyOnWriteArrayList<>();
        LockClient limited = client(b -> b.localQueueLimit(2).listener(new LockListener() {
            @Override
            public void rejected(String name) {
                events.add("rejected " + name);
            }
        }));
        DistributedLock lock = limited.lock("shed");
        CompletableFuture<Lease> first = lock.acquireAsync(LONG_WAIT);
        CompletableFuture<Lease> second = lock.acquireAsync(LONG_WAIT);
        assertThatThrownBy(() -> lock.acquire(LONG_WAIT))
                .isInstanceOf(LockRejectedException.class)
                .hasMessageContaining("shed");
        awaitTrue(Duration.ofSeconds(5), () -> !events.isEmpty());
        assertThat(events).containsExactly("rejected shed");
        held.close();
        first.get(20, TimeUnit.SECONDS).close();
        second.get(20, TimeUnit.SECONDS).close();
    }

    @Test
    void listenerSeesAcquireReleaseAndTimeout() throws Exception {
        List<String> events = new CopyOnWriteArrayList<>();
        LockClient c = client(b -> b.listener(new LockListener() {
            @Override
            public void acquired(String name, Duration waited) {
                events.add("acquired " + name);
            }

            @Override
            public void released(String name, Duration held) {
                events.add("released " + name);
            }

            @Override
            public void failed(String name, Duration waited, Throwable cause) {
                events.add("failed " + name + " " + cause.getClass().getSimpleName());
            }
        }));
        c.lock("events").acquire(LONG_WAIT).close();
        try (Lease held = client().lock("events").acquire(LONG_WAIT)) {
            assertThatThrownBy(() -> c.lock("events").acquire(Duration.ofMillis(100)))
                    .isInstanceOf(LockTimeoutException.class);
            assertThat(held.isValid()).isTrue();
        }
        // Events arrive in order on the client's listener thread, shortly after they happened.
        awaitTrue(Duration.ofSeconds(5), () -> events.size() >= 3);
        assertThat(events).containsExactly("acquired events", "released events", "failed events LockTimeoutException");
    }

    // ------------------------------------------------------------------ fair lock

    @Test
    void fairLockServesWaitersInArrivalOrderAcrossClients() throws Exception {
        if (fairLocksRefused()) {
            return;
        }
        Lease held = client().fairLock("fifo").acquire(LONG_WAIT);
        List<Integer> order = new CopyOnWriteArrayList<>();
        List<CompletableFuture<Void>> waiters = new ArrayList<>();
        for (int i = 0; i < 4; i++) {
            int id = i;
            waiters.add(client().fairLock("fifo")
                    .acquireAsync(Duration.ofSeconds(60))
                    .thenAccept(lease -> {
                        order.add(id);
                        try {
                            Thread.sleep(50);
                        } catch (InterruptedException e) {
                            Thread.currentThread().interrupt();
                        }
                        lease.close();
                    }));
            Thread.sleep(400); // let each waiter take its place in the store's queue before the next
        }
        held.close();
        CompletableFuture.allOf(waiters.toArray(CompletableFuture[]::new)).get(60, TimeUnit.SECONDS);
        assertThat(order).containsExactly(0, 1, 2, 3);
    }

    @Test
    void fairLockSkipsAWaiterThatDiedInTheQueue() throws Exception {
        if (fairLocksRefused()) {
            return;
        }
        Lease held = client().fairLock("fair-dead").acquire(LONG_WAIT);
        LockClient dying = client(b -> b.leaseTime(shortLease()));
        CompletableFuture<Lease> dead = dying.fairLock("fair-dead").acquireAsync(Duration.ofSeconds(60));
        Thread.sleep(400);
        CompletableFuture<Lease> alive = client().fairLock("fair-dead").acquireAsync(Duration.ofSeconds(60));
        Thread.sleep(400);
        simulateCrash(dying);
        held.close();
        Lease lease = alive.get(shortLease().toMillis() * 4 + 20_000, TimeUnit.MILLISECONDS);
        assertThat(lease.isValid()).isTrue();
        assertThat(dead).isNotCompleted();
        lease.close();
    }

    /**
     * Makes a client behave like a crashed process for the rest of the test: it stops talking to the
     * store without releasing anything or leaving any queue. The default cuts the client off with a
     * {@link FreezableBackend}; a backend whose store keeps entries alive for a live connection (a
     * ZooKeeper session) overrides this to also end that connection.
     *
     * @param client the client to "crash"
     * @throws Exception if the crash could not be simulated
     */
    protected void simulateCrash(LockClient client) throws Exception {
        freezable.get(client).freeze();
    }

    // ------------------------------------------------------------------ read-write lock

    @Test
    void readersShare() throws Exception {
        DistributedReadWriteLock a = client().readWriteLock("rw-share");
        DistributedReadWriteLock b = client().readWriteLock("rw-share");
        try (Lease r1 = a.readLock().acquire(LONG_WAIT);
                Lease r2 = b.readLock().acquire(LONG_WAIT)) {
            assertThat(r1.isValid() && r2.isValid()).isTrue();
            assertThat(r2.fencingToken()).isNotEqualTo(r1.fencingToken());
        }
    }

    @Test
    void writerExcludesReadersAndWriters() {
        DistributedReadWriteLock a = client().readWriteLock("rw-excl");
        DistributedReadWriteLock b = client().readWriteLock("rw-excl");
        try (Lease w = a.writeLock().acquire(LONG_WAIT)) {
            assertThat(b.readLock().tryAcquire()).isEmpty();
            assertThat(b.writeLock().tryAcquire()).isEmpty();
            assertThat(w.isValid()).isTrue();
        }
        try (Lease r = a.readLock().acquire(LONG_WAIT)) {
            assertThat(b.writeLock().tryAcquire())
                    .as("a reader excludes writers")
                    .isEmpty();
            assertThat(r.isValid()).isTrue();
        }
        assertThat(b.writeLock().tryAcquire()).isPresent();
    }

    @Test
    void aQueuedWriterIsNotStarvedByNewReaders() throws Exception {
        DistributedReadWriteLock a = client().readWriteLock("rw-starve");
        Lease reader = a.readLock().acquire(LONG_WAIT);
        CompletableFuture<Lease> writer =
                client().readWriteLock("rw-starve").writeLock().acquireAsync(Duration.ofSeconds(60));
        Thread.sleep(500);
        assertThat(client().readWriteLock("rw-starve").readLock().tryAcquire())
                .as("a new reader waits behind the queued writer")
                .isEmpty();
        reader.close();
        Lease w = writer.get(30, TimeUnit.SECONDS);
        assertThat(w.isValid()).isTrue();
        w.close();
        assertThat(client().readWriteLock("rw-starve").readLock().tryAcquire()).isPresent();
    }

    @Test
    void writeToReadDowngradeIsAllowed() {
        DistributedReadWriteLock rw = client().readWriteLock("rw-down");
        rw.writeLock().lock();
        rw.readLock().lock();
        rw.writeLock().unlock();
        DistributedReadWriteLock other = client().readWriteLock("rw-down");
        assertThat(other.writeLock().tryAcquire())
                .as("the downgraded read hold still excludes writers")
                .isEmpty();
        Optional<Lease> sharedRead = other.readLock().tryAcquire();
        assertThat(sharedRead).as("other readers may now share").isPresent();
        sharedRead.get().close();
        rw.readLock().unlock();
        assertThat(other.writeLock().tryAcquire()).isPresent();
    }

    @Test
    void readToWriteUpgradeFailsFast() {
        DistributedReadWriteLock rw = client().readWriteLock("rw-up");
        rw.readLock().lock();
        long start = System.nanoTime();
        assertThatThrownBy(() -> rw.writeLock().lock())
                .isInstanceOf(IllegalMonitorStateException.class)
                .hasMessageContaining("upgrad");
        assertThat(millisSince(start)).isLessThan(1_000);
        rw.readLock().unlock();
        rw.writeLock().lock();
        rw.writeLock().unlock();
    }

    @Test
    void readWriteFuzzNeverMixesWritersWithAnyone() throws Exception {
        List<LockClient> cs = List.of(client(), client(), client());
        AtomicInteger readers = new AtomicInteger();
        AtomicInteger writers = new AtomicInteger();
        AtomicBoolean violation = new AtomicBoolean();
        int[] writes = {0};
        AtomicInteger next = new AtomicInteger();
        runThreads(6, () -> {
            int me = next.getAndIncrement();
            DistributedReadWriteLock rw = cs.get(me % 3).readWriteLock("rw-fuzz");
            for (int i = 0; i < 12; i++) {
                boolean write = (i + me) % 3 == 0;
                try (Lease lease = (write ? rw.writeLock() : rw.readLock()).acquire(Duration.ofSeconds(60))) {
                    if (write) {
                        if (writers.incrementAndGet() != 1 || readers.get() != 0) {
                            violation.set(true);
                        }
                        writes[0]++;
                        Thread.sleep(2);
                        writers.decrementAndGet();
                    } else {
                        readers.incrementAndGet();
                        if (writers.get() != 0) {
                            violation.set(true);
                        }
                        Thread.sleep(2);
                        readers.decrementAndGet();
                    }
                    assertThat(lease.isValid()).isTrue();
                }
            }
        });
        assertThat(violation).isFalse();
        assertThat(writes[0]).isEqualTo(24);
    }

    // ------------------------------------------------------------------ semaphore

    @Test
    void semaphoreNeverExceedsItsPermits() throws Exception {
        if (semaphoresRefused()) {
            return;
        }
        List<LockClient> cs = List.of(client(), client(), client());
        History history = new History();
        AtomicInteger next = new AtomicInteger();
        runThreads(8, () -> {
            DistributedSemaphore s = cs.get(next.getAndIncrement() % 3).semaphore("sem", 3);
            for (int i = 0; i < 8; i++) {
                try (Lease permit = s.acquire(Duration.ofSeconds(60))) {
                    history.record(
                            "sem", permit.fencingToken(), Thread.currentThread().getName(), () -> {
                                try {
                                    Thread.sleep(3);
                                } catch (InterruptedException e) {
                                    Thread.currentThread().interrupt();
                                }
                            });
                }
            }
        });
        assertThat(history.size()).isEqualTo(64);
        history.assertAtMost(3);
    }

    @Test
    void semaphoreAdmitsExactlyItsPermits() {
        if (semaphoresRefused()) {
            return;
        }
        DistributedSemaphore s = client().semaphore("sem-count", 2);
        Lease a = s.tryAcquire().orElseThrow();
        Lease b = client().semaphore("sem-count", 2).tryAcquire().orElseThrow();
        assertThat(client().semaphore("sem-count", 2).tryAcquire()).isEmpty();
        a.close();
        Lease c = s.tryAcquire().orElseThrow();
        assertThat(s.permits()).isEqualTo(2);
        b.close();
        c.close();
    }

    @Test
    void semaphoreGetsACrashedHoldersPermitBackAfterItsLease() throws Exception {
        if (semaphoresRefused()) {
            return;
        }
        LockClient crashed = crashableClient();
        Lease abandoned = crashed.semaphore("sem-crash", 1).acquire(LONG_WAIT);
        Lease next = client().semaphore("sem-crash", 1).acquire(Duration.ofSeconds(30));
        assertThat(next.fencingToken()).isGreaterThan(abandoned.fencingToken());
        next.close();
    }

    // ------------------------------------------------------------------ multi-lock

    @Test
    void multiLockTakesAllNamesAndReleasesAll() {
        LockClient a = client();
        Lease lease = a.multiLock("m-b", "m-a", "m-c", "m-a").acquire(LONG_WAIT);
        assertThat(lease.parts()).extracting(Lease::name).containsExactly("m-a", "m-b", "m-c");
        assertThat(lease.name()).isEqualTo("m-a,m-b,m-c");
        assertThatThrownBy(lease::fencingToken).isInstanceOf(IllegalStateException.class);
        for (String n : List.of("m-a", "m-b", "m-c")) {
            assertThat(client().lock(n).tryAcquire()).isEmpty();
        }
        lease.close();
        for (String n : List.of("m-a", "m-b", "m-c")) {
            assertThat(client().lock(n).tryAcquire()).isPresent();
        }
    }

    @Test
    void multiLockIsAllOrNothing() {
        Lease busy = client().lock("mx-2").acquire(LONG_WAIT);
        LockClient a = client();
        assertThatThrownBy(() -> a.multiLock("mx-1", "mx-2", "mx-3").acquire(Duration.ofMillis(500)))
                .isInstanceOf(LockTimeoutException.class);
        assertThat(client().lock("mx-1").tryAcquire())
                .as("the part taken before the busy one was released")
                .isPresent();
        assertThat(client().lock("mx-3").tryAcquire()).isPresent();
        assertThat(a.heldLeases()).isEmpty();
        busy.close();
    }

    @Test
    void overlappingMultiLocksInOppositeOrderDoNotDeadlock() throws Exception {
        LockClient a = client();
        LockClient b = client();
        int[] counter = {0};
        AtomicInteger next = new AtomicInteger();
        runThreads(4, () -> {
            int me = next.getAndIncrement();
            DistributedLock lock = me % 2 == 0 ? a.multiLock("o-1", "o-2", "o-3") : b.multiLock("o-3", "o-2", "o-1");
            for (int i = 0; i < 8; i++) {
                lock.lock();
                try {
                    counter[0]++;
                } finally {
                    lock.unlock();
                }
            }
        });
        assertThat(counter[0]).isEqualTo(32);
    }

    // ---- safety: leases that are gone, late answers, deadlines, listeners, dead threads ----

    private FreezableBackend wire(LockClient client) {
        return freezable.get(client);
    }

    @Test
    void reentryIntoALeaseReleasedThroughCurrentLeaseThrowsAndUnlockSaysSo() {
        DistributedLock lock = client().lock("gone-reentry");
        lock.lock();
        lock.currentLease().orElseThrow().close();
        assertThatThrownBy(lock::lock).isInstanceOf(LeaseLostException.class);
        assertThatThrownBy(lock::unlock).isInstanceOf(LeaseLostException.class);
        assertThat(lock.isHeldByCurrentThread()).isFalse();
        assertThat(client().lock("gone-reentry").tryAcquire()).isPresent();
    }

    @Test
    void reentryAfterTheClientClosedThrows() {
        LockClient a = client();
        DistributedLock lock = a.lock("closed-reentry");
        lock.lock();
        a.close();
        assertThatThrownBy(lock::lock).isInstanceOf(LeaseLostException.class);
        assertThatThrownBy(lock::unlock).isInstanceOf(LeaseLostException.class);
    }

    @Test
    void reentryPastTheLocalDeadlineThrowsEvenBeforeTheWatchdogLooks() throws Exception {
        DistributedLock lock =
                client(b -> b.leaseTime(shortLease()).renewal(false)).lock("late-reentry");
        lock.lock();
        Lease lease = lock.currentLease().orElseThrow();
        awaitTrue(shortLease().multipliedBy(2), () -> lease.remaining().isZero());
        assertThatThrownBy(lock::lock).isInstanceOf(LeaseLostException.class);
        assertThatThrownBy(lock::unlock).isInstanceOf(LeaseLostException.class);
        assertThat(lease.isValid()).isFalse();
    }

    @Test
    void extendWhoseAnswerArrivesAfterTheDeadlineDoesNotReviveTheLease() throws Exception {
        LockClient a = client(b -> b.leaseTime(shortLease()).renewal(false));
        Lease lease = a.lock("extend-race").acquire(LONG_WAIT);
        awaitTrue(shortLease(), () -> lease.remaining().toMillis() < 300);
        wire(a).delayAnswers(Duration.ofMillis(700)); // the answer comes back after the local deadline
        assertThatThrownBy(() -> lease.extend(shortLease())).isInstanceOf(LeaseLostException.class);
        assertThat(lease.isValid()).isFalse();
    }

    @Test
    void aGrantThatArrivesAfterItsLeaseExpiredIsNeverHandedOut() throws Exception {
        Duration delay = shortLease().plusMillis(200);
        LockClient a = client(b -> b.leaseTime(shortLease()).operationTimeout(delay.plus(operationTimeout())));
        wire(a).delayAnswers(delay);
        assertThat(a.lock("late-grant").tryAcquire()).isEmpty();
        assertThatThrownBy(() -> a.lock("late-grant").acquire(delay.multipliedBy(2)))
                .isInstanceOf(LockTimeoutException.class);
        wire(a).delayAnswers(Duration.ZERO);
        // Every late grant was given back: another client gets the lock at once, not after a lease.
        Lease other = client().lock("late-grant").acquire(shortLease().dividedBy(2));
        assertThat(other.isValid()).isTrue();
        other.close();
    }

    @Test
    void aMultiLockIsNeverHandedOutWithAnExpiredPart() throws Exception {
        LockClient holder = client();
        Lease second = holder.lock("mp-2").acquire(LONG_WAIT);
        LockClient a = client(b -> b.leaseTime(shortLease()).renewal(false));
        CompletableFuture<Lease> multi =
                a.multiLock("mp-1", "mp-2").acquireAsync(shortLease().multipliedBy(6));
        sleep(shortLease().multipliedBy(3).dividedBy(2)); // "mp-1" expires while "mp-2" is awaited
        second.close();
        Lease lease = multi.get(LONG_WAIT.toMillis(), TimeUnit.MILLISECONDS);
        assertThat(lease.isValid()).isTrue();
        assertThat(lease.parts()).allMatch(Lease::isValid);
        lease.close();
    }

    @Test
    void aTimedWaitEndsAtItsDeadlineWhileAStoreCallIsInFlight() throws Exception {
        LockClient a = client(b -> b.operationTimeout(Duration.ofSeconds(10)));
        wire(a).freeze(); // every call is now on its way for ever (until the operation timeout)
        DistributedLock lock = a.lock("deadline-in-flight");
        long start = System.nanoTime();
        assertThat(lock.tryLock(300, TimeUnit.MILLISECONDS)).isFalse();
        assertThat(millisSince(start)).as("tryLock(300 ms) returned after").isLessThan(1_500);
        start = System.nanoTime();
        assertThatThrownBy(() -> lock.acquire(Duration.ofMillis(300))).isInstanceOf(LockTimeoutException.class);
        assertThat(millisSince(start)).as("acquire(300 ms) failed after").isLessThan(1_500);
    }

    @Test
    void aListenerSlowerThanTheLeaseDoesNotCostTheLease() throws Exception {
        AtomicInteger calls = new AtomicInteger();
        LockListener sleepy = new LockListener() {
            @Override
            public void acquired(String name, Duration waited) {
                nap();
            }

            @Override
            public void renewed(int leases, int lost) {
                nap();
            }

            private void nap() {
                calls.incrementAndGet();
                try {
                    Thread.sleep(shortLease().toMillis() * 2);
                } catch (InterruptedException e) {
                    Thread.currentThread().interrupt();
                }
            }
        };
        LockClient a = client(b -> b.leaseTime(shortLease()).listener(sleepy));
        Lease lease = a.lock("slow-listener").acquire(LONG_WAIT);
        long until = System.nanoTime() + shortLease().multipliedBy(4).toNanos();
        while (System.nanoTime() - until < 0) {
            assertThat(lease.isValid())
                    .as("lease valid while the listener sleeps")
                    .isTrue();
            Thread.sleep(50);
        }
        assertThat(calls.get()).as("the listener was called").isPositive();
        assertThat(client().lock("slow-listener").tryAcquire()).isEmpty();
        lease.close();
    }

    @Test
    void aReleaseThatFailsIsRetriedSoTheLockDoesNotStayTakenUntilTheLeaseEnds() throws Exception {
        LockClient a = client(b -> b.leaseTime(Duration.ofSeconds(60)));
        Lease lease = a.lock("failed-release").acquire(LONG_WAIT);
        wire(a).failNextRelease();
        assertThatThrownBy(lease::close).isInstanceOf(LockBackendException.class);
        Lease next = client().lock("failed-release").acquire(Duration.ofSeconds(10));
        assertThat(next.fencingToken()).isGreaterThan(lease.fencingToken());
        next.close();
    }

    @Test
    void aThreadThatEndsHoldingTheLockViewLosesItAndTheLockIsFreed() throws Exception {
        LockClient a = client(b -> b.leaseTime(shortLease()));
        AtomicReference<Lease> held = new AtomicReference<>();
        Thread t = new Thread(() -> {
            DistributedLock lock = a.lock("dead-thread");
            lock.lock();
            held.set(lock.currentLease().orElseThrow());
            // ends without unlock()
        });
        t.start();
        t.join();
        Lease lease = held.get();
        Lease next = client().lock("dead-thread").acquire(shortLease().multipliedBy(3));
        assertThat(next.fencingToken()).isGreaterThan(lease.fencingToken());
        assertThat(lease.isValid()).isFalse();
        assertThat(lease.whenLost()).succeedsWithin(Duration.ofSeconds(5));
        assertThat(a.heldLeases()).isEmpty();
        next.close();
    }

    // ---- safety: random operation sequences (property-based) ----

    /**
     * Runs {@link StatefulLockProperties} against this store: random sequences of operations with every
     * invariant checked after each step, shrunk to a minimal sequence on failure. Tries per store: the
     * system property {@code dlock.pbt.tries} (CI: 10); a long hunt is e.g. {@code -Ddlock.pbt.tries=500}.
     */
    @Test
    @Timeout(value = 24, unit = TimeUnit.HOURS) // bounded below by the number of tries
    void randomOperationSequencesKeepEveryInvariant() {
        String tries = System.getProperty("dlock.pbt.tries", "10");
        org.junit.jupiter.api.Assertions.assertTimeoutPreemptively(
                Duration.ofSeconds(120 + 30L * Integer.parseInt(tries)), () -> runStatefulProperties(tries));
    }

    private void runStatefulProperties(String tries) {
        String base = namespace;
        AtomicInteger run = new AtomicInteger();
        StatefulLockProperties.target = new StatefulLockProperties.Target(
                () -> newClientBuilder().namespace(base + run.incrementAndGet()).operationTimeout(operationTimeout()),
                shortLease(),
                java.util.Arrays.stream(dev.dlock.spi.Mode.values())
                        .filter(m -> (m != dev.dlock.spi.Mode.FAIR || offersFairLocks())
                                && (m != dev.dlock.spi.Mode.PERMIT || offersSemaphores()))
                        .toList());
        try {
            var request = org.junit.platform.launcher.core.LauncherDiscoveryRequestBuilder.request()
                    .selectors(org.junit.platform.engine.discovery.DiscoverySelectors.selectClass(
                            StatefulLockProperties.class))
                    .filters(org.junit.platform.launcher.EngineFilter.includeEngines("jqwik"))
                    .configurationParameter("jqwik.tries.default", tries)
                    .configurationParameter("jqwik.database", "target/jqwik-database")
                    .configurationParameter("jqwik.shrinking.bounded.seconds", "120")
                    .configurationParameter("jqwik.reporting.onlyfailures", "true")
                    .build();
            var listener = new org.junit.platform.launcher.listeners.SummaryGeneratingListener();
            org.junit.platform.launcher.core.LauncherFactory.create().execute(request, listener);
            var summary = listener.getSummary();
            if (!summary.getFailures().isEmpty()) {
                Throwable first = summary.getFailures().get(0).getException();
                throw new AssertionError("a random operation sequence broke an invariant: " + first, first);
            }
            assertThat(summary.getTestsSucceededCount()).as("the property ran").isEqualTo(1);
        } finally {
            StatefulLockProperties.target = null;
        }
    }

    // ---- safety: virtual threads ----

    /**
     * 2,000 callers on 50 names over two clients, each taking its name once through the {@code Lock} view.
     * On Java 21+ the callers are virtual threads and a JFR recording must see no carrier thread pinned
     * (scripts/test.sh runs this case on Temurin 25); on Java 17 they are platform threads.
     */
    @Test
    void twoThousandCallersOnFiftyNamesFinishWithExactTotalsAndNoPinnedCarrier() throws Exception {
        int callers = 2_000;
        int names = 50;
        // A hundred local queue heads ask the store at once: the case is about totals and pinning, so a
        // busy CI machine's slow answers must not end it with a timeout.
        LockClient a = client(o -> o.operationTimeout(Duration.ofSeconds(30)));
        LockClient b = client(o -> o.operationTimeout(Duration.ofSeconds(30)));
        java.util.concurrent.atomic.AtomicIntegerArray inside =
                new java.util.concurrent.atomic.AtomicIntegerArray(names);
        java.util.concurrent.atomic.AtomicIntegerArray done = new java.util.concurrent.atomic.AtomicIntegerArray(names);
        AtomicInteger overlaps = new AtomicInteger();
        java.util.concurrent.ExecutorService pool = virtualThreadsIfAvailable();
        boolean virtual = !(pool instanceof java.util.concurrent.ThreadPoolExecutor);
        // Warm up: classes first used by these callers are initialized before the recording starts (a
        // virtual thread waiting for another thread's class initialization pins its carrier once per class).
        List<java.util.concurrent.Future<?>> warmUp = new ArrayList<>();
        for (int i = 0; i < 100; i++) {
            DistributedLock lock = (i % 2 == 0 ? a : b).lock("vt-warm-" + (i % 5));
            warmUp.add(pool.submit(() -> {
                lock.lock();
                lock.unlock();
            }));
        }
        for (java.util.concurrent.Future<?> f : warmUp) {
            f.get(1, TimeUnit.MINUTES);
        }
        Path jfr = Files.createTempFile("dlock-pinned", ".jfr");
        try (jdk.jfr.Recording recording = new jdk.jfr.Recording()) {
            recording.enable("jdk.VirtualThreadPinned").withThreshold(Duration.ZERO);
            recording.start();
            List<java.util.concurrent.Future<?>> futures = new ArrayList<>();
            for (int i = 0; i < callers; i++) {
                int n = i % names;
                DistributedLock lock = (i % 2 == 0 ? a : b).lock("vt-" + n);
                futures.add(pool.submit(() -> {
                    lock.lock();
                    try {
                        if (inside.incrementAndGet(n) != 1) {
                            overlaps.incrementAndGet();
                        }
                        inside.decrementAndGet(n);
                        done.incrementAndGet(n);
                    } finally {
                        lock.unlock();
                    }
                }));
            }
            for (java.util.concurrent.Future<?> f : futures) {
                f.get(3, TimeUnit.MINUTES);
            }
            recording.stop();
            recording.dump(jfr);
        } finally {
            pool.shutdownNow();
        }
        assertThat(overlaps.get()).as("callers inside one name at once").isZero();
        for (int n = 0; n < names; n++) {
            assertThat(done.get(n)).as("callers done on name %s", n).isEqualTo(callers / names);
        }
        List<jdk.jfr.consumer.RecordedEvent> pinned = jdk.jfr.consumer.RecordingFile.readAllEvents(jfr).stream()
                .filter(e -> e.getEventType().getName().equals("jdk.VirtualThreadPinned"))
                // Class initialization of classes the warm-up did not reach (JDK, store client): once per
                // class and JVM, not a store call.
                .filter(e -> !(e.hasField("pinnedReason")
                        && String.valueOf(e.getString("pinnedReason")).startsWith("Waited for initialization")))
                .toList();
        Files.deleteIfExists(jfr);
        assertThat(pinned)
                .as(
                        "carrier threads pinned (virtual threads: %s); first: %s",
                        virtual,
                        pinned.stream()
                                .findFirst()
                                .map(e -> String.valueOf(e.getStackTrace()))
                                .orElse("none"))
                .isEmpty();
    }

    private static java.util.concurrent.ExecutorService virtualThreadsIfAvailable() throws Exception {
        if (Runtime.version().feature() >= 21) {
            return (java.util.concurrent.ExecutorService) java.util.concurrent.Executors.class
                    .getMethod("newVirtualThreadPerTaskExecutor")
                    .invoke(null);
        }
        return java.util.concurrent.Executors.newFixedThreadPool(2_000);
    }

    // ---- zookeeper safety: no writer beside a hold, no release of a successor's hold ----

    @Test
    void aWriterQueuedBeforeADowngradeWaitsForTheDowngradedReader() throws Exception {
        DistributedReadWriteLock a = client().readWriteLock("rw-down-queue");
        a.writeLock().lock();
        LockClient b = client();
        CompletableFuture<Lease> writer =
                b.readWriteLock("rw-down-queue").writeLock().acquireAsync(LONG_WAIT);
        awaitQueued(b, "rw-down-queue");
        a.readLock().lock(); // downgrade: the read hold is taken while the write hold is still held
        a.writeLock().unlock();
        assertThatThrownBy(() -> writer.get(2, TimeUnit.SECONDS))
                .as("the queued writer is not granted beside the downgraded read hold")
                .isInstanceOf(java.util.concurrent.TimeoutException.class);
        a.readLock().unlock();
        Lease w = writer.get(30, TimeUnit.SECONDS);
        assertThat(w.isValid()).isTrue();
        w.close();
    }

    @Test
    void aForceReleasedHoldersReleaseNeverRemovesTheNextHolder() throws Exception {
        for (String name : offersFairLocks() ? List.of("fr-x", "fr-fair") : List.of("fr-x")) {
            boolean fair = name.equals("fr-fair");
            LockClient old = client();
            Lease stale = (fair ? old.fairLock(name) : old.lock(name)).acquire(LONG_WAIT);
            LockClient admin = client();
            assertThat(admin.forceRelease(name)).isTrue();
            LockClient next = client();
            Lease current = (fair ? next.fairLock(name) : next.lock(name)).acquire(LONG_WAIT);
            stale.close(); // the old holder gives up what it believes it still holds
            assertThat(current.isValid()).isTrue();
            assertThat((fair ? admin.fairLock(name) : admin.lock(name)).tryAcquire())
                    .as("the new holder of '%s' still holds after the old holder's release", name)
                    .isEmpty();
            assertThat(admin.describe(name))
                    .flatExtracting(LockInfo::holders)
                    .extracting(LockInfo.Holder::fencingToken)
                    .containsExactly(current.fencingToken());
            current.close();
        }
    }

    /** Waits until the store shows a waiter on a name (or half a second where it shows no queue). */
    private void awaitQueued(LockClient c, String name) throws InterruptedException {
        long deadline = System.nanoTime() + TimeUnit.SECONDS.toNanos(20);
        while (System.nanoTime() - deadline < 0) {
            List<LockInfo> infos = c.describe(name);
            if (infos.stream().anyMatch(i -> i.waiters() < 0)) {
                Thread.sleep(500);
                return;
            }
            if (infos.stream().anyMatch(i -> i.waiters() > 0)) {
                return;
            }
            Thread.sleep(20);
        }
        throw new AssertionError("no waiter on '" + name + "' showed up within 20 s");
    }
}
