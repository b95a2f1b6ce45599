package dev.dlock.tck;

import static org.assertj.core.api.Assertions.assertThat;

import dev.dlock.DistributedLock;
import dev.dlock.DistributedReadWriteLock;
import dev.dlock.Lease;
import dev.dlock.LockClient;
import java.nio.file.Files;
import java.nio.file.Path;
import java.time.Duration;
import java.util.ArrayList;
import java.util.List;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.atomic.AtomicBoolean;
import java.util.concurrent.atomic.AtomicInteger;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.Timeout;

/**
 * Fuzz: many threads of several clients on random schedules, with exact totals and no overlap (exclusive,
 * read-write, 2,000 callers on virtual threads), and random operation sequences checked against every
 * invariant ({@link StatefulLockProperties}, property-based, shrunk on failure).
 */
abstract class FuzzCases extends ContractSection {
    FuzzCases(LockContractTest contract) {
        super(contract);
    }

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
                .filter(e -> !whileLoadingAClass(e))
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

    /**
     * A carrier pinned while the JVM loads or initializes a class the warm-up did not reach (a JDK, engine
     * or store-client class first used on a rare path): once per class and JVM, not a store call. Java 24+
     * names the reason: waiting for another thread's class initialization, or "Freeze or preempt failed
     * (2)", a VM critical section, which the JVM enters while it resolves a class for the thread (checked
     * on Temurin 25: two virtual threads resolving one class while its loader is slow give exactly that
     * reason, a "Contended monitor enter" with the resolving line as the top frame). Blocking in dlock's or
     * a store client's own code pins for other reasons (a native frame, code 3) and still fails the case.
     */
    private static boolean whileLoadingAClass(jdk.jfr.consumer.RecordedEvent pinned) {
        if (!pinned.hasField("pinnedReason")) {
            return false;
        }
        String reason = String.valueOf(pinned.getString("pinnedReason"));
        return reason.startsWith("Waited for initialization") || reason.equals("Freeze or preempt failed (2)");
    }

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
        String base = namespace();
        AtomicInteger run = new AtomicInteger();
        StatefulLockProperties.target = new StatefulLockProperties.Target(
                () -> newClientBuilder().namespace(base + run.incrementAndGet()).operationTimeout(operationTimeout()),
                shortLease(),
                operationTimeout(),
                java.util.Arrays.stream(dev.dlock.spi.Mode.values())
                        .filter(m -> (m != dev.dlock.spi.Mode.FAIR || offersFairLocks())
                                && (m != dev.dlock.spi.Mode.PERMIT || offersSemaphores()))
                        .toList(),
                storeLosesItsState());
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

    private static java.util.concurrent.ExecutorService virtualThreadsIfAvailable() throws Exception {
        if (Runtime.version().feature() >= 21) {
            return (java.util.concurrent.ExecutorService) java.util.concurrent.Executors.class
                    .getMethod("newVirtualThreadPerTaskExecutor")
                    .invoke(null);
        }
        return java.util.concurrent.Executors.newFixedThreadPool(2_000);
    }
}
