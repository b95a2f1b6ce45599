package dev.dlock.internal;

import dev.dlock.DistributedLock;
import dev.dlock.DistributedReadWriteLock;
import dev.dlock.Lease;
import dev.dlock.LockClient;
import dev.dlock.mem.FreshMemoryStore;
import java.lang.reflect.Method;
import java.time.Duration;
import java.util.List;
import java.util.concurrent.ConcurrentLinkedQueue;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.atomic.AtomicBoolean;
import java.util.concurrent.atomic.AtomicInteger;
import java.util.concurrent.atomic.AtomicLong;
import kotlin.Unit;
import org.jetbrains.kotlinx.lincheck.Actor;
import org.jetbrains.kotlinx.lincheck.execution.ExecutionScenario;
import org.jetbrains.lincheck.datastructures.DSLScenarioBuilder;
import org.jetbrains.lincheck.datastructures.ModelCheckingOptions;
import org.jetbrains.lincheck.datastructures.Operation;
import org.jetbrains.lincheck.datastructures.Options;
import org.jetbrains.lincheck.datastructures.StressOptions;
import org.jetbrains.lincheck.datastructures.Validate;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.Timeout;

/**
 * Lincheck over the engine with a memory store: the callers of one client take, re-enter and downgrade
 * locks in the interleavings the model checker explores, and on real threads in stress mode, where holds
 * are also handed off (cohort; model checking freezes {@code System.nanoTime()}, so no hold passes there);
 * the lock's promises are checked inside each critical section and once every caller is done.
 *
 * <p>The sequential specification: every operation is one critical section that enters, checks and
 * leaves, so in any sequential order each one returns normally; an operation whose check fails throws,
 * which no sequential order explains, and Lincheck prints the interleaving that led there. The promises
 * checked: at most one holder of an exclusive or write hold, and no reader beside a writer (a downgraded
 * writer's own read excepted); fencing tokens strictly increase in grant order per name; a hold is valid
 * when it is handed over; a re-entered {@code Lock} view is still held after the inner unlock and not after
 * the outer one; after every caller is done nothing is held at the store (so a released lock can be taken),
 * and no caller waited forever (a caller that does hangs the run, which Lincheck reports with a thread dump).
 *
 * <p>Not modelled here: time (leases of 30 s never expire within a run, so the watchdog's ticks never
 * come; expiry and loss are in {@code CohortTest}, {@code EngineTimeoutTest} and the Promela model
 * {@code cohort-handoff.pml}), store answers that come late (the memory store answers at once).
 *
 * <p>Budget: {@code -Ddlock.lincheck.invocations=N} interleavings per scenario (default 12), {@code
 * -Ddlock.lincheck.iterations=N} generated scenarios besides the three fixed ones (default 1); the stress
 * case runs 5x the scenarios and 20x the invocations. Times in docs/models.md.
 */
@Timeout(600)
public class HandOffModelCheckTest {
    private static final Duration WAIT = Duration.ofSeconds(60);
    /** Clients to close off the model checker's threads (closing waits for the client's scheduler). */
    private static final ConcurrentLinkedQueue<LockClient> TO_CLOSE = new ConcurrentLinkedQueue<>();

    private final LockClient client = LockClient.builder(FreshMemoryStore.factory())
            .leaseTime(Duration.ofSeconds(30))
            .localHandoff(8, Duration.ofSeconds(30))
            .build();
    private final DistributedLock lock = client.lock("x");
    private final DistributedReadWriteLock rw = client.readWriteLock("rw");
    private final AtomicInteger holders = new AtomicInteger();
    private final AtomicInteger writers = new AtomicInteger();
    private final AtomicInteger readers = new AtomicInteger();
    private final AtomicLong lastToken = new AtomicLong();
    private final AtomicLong lastWriteToken = new AtomicLong();

    private static void check(boolean promise, String what) {
        if (!promise) {
            throw new IllegalStateException(what);
        }
    }

    private static void tokenAfter(AtomicLong last, Lease lease) {
        long before = last.getAndAccumulate(lease.fencingToken(), Math::max);
        check(lease.fencingToken() > before, "token " + lease.fencingToken() + " granted after " + before);
        check(lease.isValid(), "a hold handed over invalid: " + lease);
    }

    private void exclusive(Lease lease) {
        check(holders.incrementAndGet() == 1, "two holders of 'x' at once");
        tokenAfter(lastToken, lease);
        holders.decrementAndGet();
    }

    /** Waits for the lock (lease API), checks, releases: a waiter the release may hand the hold to. */
    @Operation
    public void acquireRelease() {
        Lease lease = lock.acquire(WAIT);
        exclusive(lease);
        lease.close();
    }

    /** Tries once (no wait), checks, releases. */
    @Operation
    public void tryAcquireRelease() {
        lock.tryAcquire().ifPresent(lease -> {
            exclusive(lease);
            lease.close();
        });
    }

    /** Locks the {@code Lock} view twice (re-entry), unlocks twice; it stays held until the outer unlock. */
    @Operation
    public void reenter() {
        lock.lock();
        lock.lock();
        Lease lease = lock.currentLease().orElseThrow();
        exclusive(lease);
        lock.unlock();
        check(lock.isHeldByCurrentThread(), "a re-entered lock not held after the inner unlock");
        check(lock.currentLease().orElseThrow() == lease, "the inner unlock changed the lease");
        lock.unlock();
        check(!lock.isHeldByCurrentThread(), "held after the outer unlock");
    }

    private void enterWrite() {
        rw.writeLock().lock();
        check(writers.incrementAndGet() == 1, "two writers at once");
        check(readers.get() == 0, "a writer beside a reader");
        tokenAfter(lastWriteToken, rw.writeLock().currentLease().orElseThrow());
    }

    /** Writes, then leaves. */
    @Operation
    public void write() {
        enterWrite();
        writers.decrementAndGet();
        rw.writeLock().unlock();
    }

    /**
     * Writes, takes the read lock under the write lock (a downgrade), leaves the write lock, reads, leaves.
     * Never run beside {@link #read} by the generated scenarios: see {@link #downgradeBesideAQueuedReader}.
     */
    @Operation
    public void writeThenDowngrade() {
        enterWrite();
        rw.readLock().lock();
        readers.incrementAndGet();
        writers.decrementAndGet();
        rw.writeLock().unlock();
        check(writers.get() == 0, "a writer beside a downgraded reader");
        readers.decrementAndGet();
        rw.readLock().unlock();
    }

    /** Reads, then leaves. */
    @Operation
    public void read() {
        rw.readLock().lock();
        readers.incrementAndGet();
        check(writers.get() == 0, "a reader beside a writer");
        readers.decrementAndGet();
        rw.readLock().unlock();
    }

    /** After every caller is done: nothing held at the store, nothing left in the client. */
    @Validate
    public void nothingHeld() {
        TO_CLOSE.add(client);
        check(client.heldLeases().isEmpty(), "held by the client after all callers are done: " + client.heldLeases());
        for (String name : List.of("x", "rw")) {
            client.describe(name)
                    .forEach(info ->
                            check(info.holders().isEmpty(), "held at the store after all callers are done: " + info));
        }
    }

    /**
     * Model checking: the fixed scenarios, then generated ones. Lincheck freezes {@code System.nanoTime()}
     * here, so a waiter never asked before the last confirmation and no hold is passed on: this mode covers
     * queueing, re-entry, downgrades and release to the store; hand-off is the stress case's.
     */
    @Test
    void modelChecking() throws Exception {
        run(withFixedScenarios(new ModelCheckingOptions())
                .iterations(Integer.getInteger("dlock.lincheck.iterations", 1))
                .invocationsPerIteration(Integer.getInteger("dlock.lincheck.invocations", 12))
                .threads(2)
                .actorsPerThread(2)
                .actorsBefore(0)
                .actorsAfter(0));
    }

    /** Stress: the same scenarios on real threads and the real clock, where holds are passed on. */
    @Test
    void stress() throws Exception {
        run(withFixedScenarios(new StressOptions())
                .iterations(Integer.getInteger("dlock.lincheck.iterations", 1) * 5)
                .invocationsPerIteration(Integer.getInteger("dlock.lincheck.invocations", 12) * 20)
                .threads(3)
                .actorsPerThread(2)
                .actorsBefore(0)
                .actorsAfter(0));
    }

    /**
     * The scenarios that reach each guarded interleaving every time: a downgrade with a writer waiting
     * behind it, two waiters and re-entry, re-entry beside a try.
     */
    private static <O extends Options<O, ?>> O withFixedScenarios(O options) {
        return options.addCustomScenario(parallel(new String[] {"writeThenDowngrade"}, new String[] {"write"}))
                .addCustomScenario(
                        parallel(new String[] {"acquireRelease", "reenter"}, new String[] {"acquireRelease"}))
                .addCustomScenario(parallel(new String[] {"reenter"}, new String[] {"tryAcquireRelease", "reenter"}));
    }

    /**
     * A downgrade beside another thread of the client already waiting for the read lock. Found by this test
     * on the engine before the fix: the downgrade queued behind that reader, which waits for the write hold
     * to end, so both waited forever ({@code lock()}); Lincheck reported the run as hung with the
     * interleaving (within 60 interleavings, about 30 s; 5 were not enough). A downgrade now goes first in
     * its local queue ({@code LocalQueues#enqueue}).
     */
    @Test
    void downgradeBesideAQueuedReader() throws Exception {
        run(new ModelCheckingOptions()
                .addCustomScenario(parallel(new String[] {"writeThenDowngrade"}, new String[] {"read"}))
                .iterations(0)
                .invocationsPerIteration(Integer.getInteger("dlock.lincheck.invocations", 12) * 5));
    }

    /** A scenario of these threads, each running the named operations in order. */
    private static ExecutionScenario parallel(String[]... threads) {
        DSLScenarioBuilder scenario = new DSLScenarioBuilder();
        scenario.parallel(p -> {
            for (String[] operations : threads) {
                p.thread(t -> {
                    for (String operation : operations) {
                        try {
                            Method m = HandOffModelCheckTest.class.getMethod(operation);
                            t.add(new Actor(m, List.of(), false, false, false, false, false));
                        } catch (NoSuchMethodException e) {
                            throw new IllegalArgumentException(operation, e);
                        }
                    }
                    return Unit.INSTANCE;
                });
            }
            return Unit.INSTANCE;
        });
        return scenario.buildScenario();
    }

    /** Runs the check; a thread of ours closes each run's client off the model checker's threads. */
    private static void run(Options<?, ?> options) throws Exception {
        AtomicBoolean stop = new AtomicBoolean();
        Thread closer = new Thread(() -> closeAll(stop), "lincheck-client-closer");
        closer.start();
        try {
            // Lincheck reports a run as hung after its invocation timeout; on a loaded shared machine the
            // first runs (while it instruments the classes) take longer than its default, so allow more.
            // (A public Kotlin method whose name Kotlin mangles as module-internal.)
            options.invocationTimeout$lincheck(TimeUnit.SECONDS.toMillis(120));
            options.check(HandOffModelCheckTest.class);
        } finally {
            stop.set(true);
            closer.join();
        }
    }

    private static void closeAll(AtomicBoolean stop) {
        while (!stop.get() || !TO_CLOSE.isEmpty()) {
            LockClient c = TO_CLOSE.poll();
            if (c != null) {
                c.close();
                continue;
            }
            try {
                Thread.sleep(5);
            } catch (InterruptedException e) {
                return;
            }
        }
    }
}
