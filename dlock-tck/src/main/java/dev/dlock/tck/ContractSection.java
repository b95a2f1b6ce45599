package dev.dlock.tck;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;

import dev.dlock.LockClient;
import java.time.Duration;
import java.util.ArrayList;
import java.util.Collections;
import java.util.List;
import java.util.concurrent.CountDownLatch;
import java.util.concurrent.TimeUnit;
import java.util.function.BooleanSupplier;
import java.util.function.Consumer;

/**
 * The base of every section of {@link LockContractTest}. A section is a {@code @Nested} class of the
 * contract test, so JUnit runs it once per store with the store's test instance around it (its fresh
 * namespace before each case, its clients closed after). This class hands a section that instance's
 * hooks and fixture under their own names, so a case reads the same wherever it lives, plus the waiting
 * and threading helpers the cases share.
 */
abstract class ContractSection {
    /** The wait for a lock that should be granted at once; generous for a loaded machine. */
    static final Duration LONG_WAIT = Duration.ofSeconds(20);

    private final LockContractTest contract;

    ContractSection(LockContractTest contract) {
        this.contract = contract;
    }

    // ---- the store's hooks and the test's fixture, from the enclosing contract test

    final LockClient client() {
        return contract.client();
    }

    final LockClient client(Consumer<LockClient.Builder> options) {
        return contract.client(options);
    }

    /** A holder that "crashes": it never renews and never releases. */
    final LockClient crashableClient() {
        return client(b -> b.leaseTime(shortLease()).renewal(false));
    }

    final FreezableBackend wire(LockClient client) {
        return contract.wire(client);
    }

    final String namespace() {
        return contract.namespace();
    }

    final LockClient.Builder newClientBuilder() {
        return contract.newClientBuilder();
    }

    final void stopStore() throws Exception {
        contract.stopStore();
    }

    final void startStore() throws Exception {
        contract.startStore();
    }

    final void simulateCrash(LockClient client) throws Exception {
        contract.simulateCrash(client);
    }

    final Duration shortLease() {
        return contract.shortLease();
    }

    final Duration operationTimeout() {
        return contract.operationTimeout();
    }

    final boolean offersFairLocks() {
        return contract.offersFairLocks();
    }

    final boolean offersSemaphores() {
        return contract.offersSemaphores();
    }

    final boolean reservesTokenRoom() {
        return contract.reservesTokenRoom();
    }

    final boolean holdsOutliveTheirClient() {
        return contract.holdsOutliveTheirClient();
    }

    final Runnable storeLosesItsState() {
        return contract.storeLosesItsState();
    }

    /** For a store without fair locks: asserts that {@code fairLock()} is refused, and returns true. */
    final boolean fairLocksRefused() {
        if (offersFairLocks()) {
            return false;
        }
        assertThatThrownBy(() -> client().fairLock("refused"))
                .isInstanceOf(UnsupportedOperationException.class)
                .hasMessageContaining("fair");
        return true;
    }

    /** For a store without semaphores: asserts that {@code semaphore()} is refused, and returns true. */
    final boolean semaphoresRefused() {
        if (offersSemaphores()) {
            return false;
        }
        assertThatThrownBy(() -> client().semaphore("refused", 2))
                .isInstanceOf(UnsupportedOperationException.class)
                .hasMessageContaining("semaphore");
        return true;
    }

    // ---- helpers shared by the cases

    static void runThreads(int threads, ThrowingRunnable body) throws Exception {
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
    interface ThrowingRunnable {
        void run() throws Exception;
    }

    static long millisSince(long startNanos) {
        return TimeUnit.NANOSECONDS.toMillis(System.nanoTime() - startNanos);
    }

    static void sleep(Duration d) throws InterruptedException {
        Thread.sleep(d.toMillis());
    }

    static void awaitTrue(Duration max, BooleanSupplier condition) throws InterruptedException {
        long deadline = System.nanoTime() + max.toNanos();
        while (!condition.getAsBoolean()) {
            assertThat(System.nanoTime() - deadline)
                    .as("condition met within %s", max)
                    .isNegative();
            Thread.sleep(10);
        }
    }
}
