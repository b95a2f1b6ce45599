package dev.dlock.internal;

import static org.assertj.core.api.Assertions.assertThat;

import dev.dlock.DistributedLock;
import dev.dlock.Lease;
import dev.dlock.LockClient;
import dev.dlock.LockException;
import dev.dlock.mem.MemoryStore;
import dev.dlock.spi.LockBackendProvider;
import java.time.Duration;
import java.util.ArrayList;
import java.util.List;
import java.util.Map;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.ConcurrentHashMap;
import java.util.concurrent.CopyOnWriteArrayList;
import java.util.concurrent.ThreadLocalRandom;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.atomic.AtomicInteger;
import java.util.concurrent.atomic.AtomicLong;
import java.util.concurrent.locks.LockSupport;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.Timeout;

/**
 * Many threads of three clients take two locks through every API, with random waits, cancels, timeouts
 * and interrupts, over a store that answers late at random and goes down now and then (in the first
 * part of the run). The promises checked: never two holders inside at once, fencing tokens only grow,
 * only {@code LockException}s reach the callers, and when it is over no client has a local waiter left
 * and nothing is held or queued in the store.
 */
@Timeout(90)
class EngineStressTest {
    private static final String STORE_NAME = "engine-stress";
    private static final List<String> NAMES = List.of("s0", "s1");
    private static final long RUN_NANOS = TimeUnit.SECONDS.toNanos(8);

    private final String namespace =
            "stress" + Long.toHexString(ThreadLocalRandom.current().nextLong() & 0xffffff);
    private final Map<String, AtomicInteger> inside = new ConcurrentHashMap<>();
    private final Map<String, AtomicLong> lastToken = new ConcurrentHashMap<>();
    private final List<String> violations = new CopyOnWriteArrayList<>();

    /** An engine, not a {@code LockClient}: the test looks at its local queues at the end. */
    private Engine client() {
        String uri = "mem:" + STORE_NAME;
        return Engine.open(
                uri,
                LockBackendProvider.factoryFor(uri).andThen(b -> {
                    FaultyBackend f = new FaultyBackend(b);
                    f.acquireDelay = r -> ThreadLocalRandom.current().nextInt(4) == 0
                            ? ThreadLocalRandom.current().nextInt(40)
                            : 0;
                    return f;
                }),
                new EngineOptions(
                        1_000,
                        EngineOptions.DEFAULTS.renewal(),
                        EngineOptions.DEFAULTS.waitTime(),
                        EngineOptions.DEFAULTS.localQueueLimit(),
                        namespace,
                        Duration.ofMillis(300),
                        EngineOptions.DEFAULTS.listener(),
                        EngineOptions.DEFAULTS.handoffPasses(),
                        EngineOptions.DEFAULTS.handoffTime()));
    }

    private void criticalSection(String name, long token) {
        if (inside.get(name).incrementAndGet() != 1) {
            violations.add("two holders inside '" + name + "'");
        }
        long before = lastToken.get(name).getAndAccumulate(token, Math::max);
        if (token <= before) {
            violations.add("token " + token + " of '" + name + "' after " + before);
        }
        LockSupport.parkNanos(
                TimeUnit.MICROSECONDS.toNanos(ThreadLocalRandom.current().nextInt(2_000)));
        inside.get(name).decrementAndGet();
    }

    private void oneStep(Engine client) throws Exception {
        ThreadLocalRandom r = ThreadLocalRandom.current();
        String name = NAMES.get(r.nextInt(NAMES.size()));
        DistributedLock lock = r.nextBoolean() ? client.lock(name) : client.multiLock(List.of(name));
        switch (r.nextInt(4)) {
            case 0 -> { // lease API with a random wait
                try (Lease lease = lock.acquire(Duration.ofMillis(r.nextInt(200)))) {
                    criticalSection(name, lease.parts().get(0).fencingToken());
                }
            }
            case 1 -> { // async, cancelled at a random moment
                CompletableFuture<Lease> f = lock.acquireAsync(Duration.ofMillis(r.nextInt(300)));
                LockSupport.parkNanos(TimeUnit.MILLISECONDS.toNanos(r.nextInt(30)));
                if (!f.cancel(true) && !f.isCompletedExceptionally()) {
                    try (Lease lease = f.join()) {
                        criticalSection(name, lease.parts().get(0).fencingToken());
                    }
                }
            }
            default -> { // the Lock view, interrupted at random by the chaos thread
                if (lock.tryLock(r.nextInt(200), TimeUnit.MILLISECONDS)) {
                    try {
                        lock.tryLock(); // reentrant
                        lock.unlock();
                        criticalSection(
                                name,
                                lock.currentLease().orElseThrow().parts().get(0).fencingToken());
                    } finally {
                        lock.unlock();
                    }
                }
            }
        }
    }

    @Test
    void randomWaitsCancelsInterruptsAndOutagesKeepEveryPromise() throws Exception {
        NAMES.forEach(n -> {
            inside.put(n, new AtomicInteger());
            lastToken.put(n, new AtomicLong());
        });
        List<Engine> clients = List.of(client(), client(), client());
        long end = System.nanoTime() + RUN_NANOS;
        List<Thread> workers = new ArrayList<>();
        List<Throwable> unexpected = new CopyOnWriteArrayList<>();
        for (int i = 0; i < 9; i++) {
            Engine client = clients.get(i % clients.size());
            workers.add(new Thread(
                    () -> {
                        while (System.nanoTime() - end < 0) {
                            Thread.interrupted();
                            try {
                                oneStep(client);
                            } catch (LockException | InterruptedException expected) {
                                // timeouts, outages, interrupts, cancellations: all allowed
                            } catch (java.util.concurrent.CancellationException expected) {
                                // the async future was cancelled
                            } catch (Throwable e) {
                                unexpected.add(e);
                            }
                        }
                    },
                    "stress-" + i));
        }
        workers.forEach(Thread::start);
        MemoryStore store = MemoryStore.named(STORE_NAME);
        ThreadLocalRandom r = ThreadLocalRandom.current();
        while (System.nanoTime() - end < 0) {
            Thread.sleep(50 + r.nextInt(100));
            workers.get(r.nextInt(workers.size())).interrupt();
            // Outages only in the first part: a release that fails in an outage leaves the hold to expire
            // by its lease time (1 s), which must be over before the final check.
            if (r.nextInt(10) == 0 && end - System.nanoTime() > TimeUnit.SECONDS.toNanos(3)) {
                store.goDown();
                Thread.sleep(r.nextInt(150)); // shorter than a lease: holders keep their leases
                store.comeBack();
            }
        }
        store.comeBack();
        for (Thread t : workers) {
            t.join(30_000);
            assertThat(t.isAlive()).as(t.getName() + " finished").isFalse();
        }
        assertThat(unexpected).as("only LockExceptions and interrupts").isEmpty();
        assertThat(violations).isEmpty();
        long deadline = System.nanoTime() + TimeUnit.SECONDS.toNanos(5);
        for (Engine c : clients) {
            while (!c.acquisitions.noneWaiting() && System.nanoTime() - deadline < 0) {
                Thread.sleep(20);
            }
            assertThat(c.acquisitions.noneWaiting()).as("no local waiter left").isTrue();
            assertThat(c.heldLeases()).as("nothing held after the run").isEmpty();
        }
        clients.forEach(Engine::close);
        try (LockClient observer =
                LockClient.builder("mem:" + STORE_NAME).namespace(namespace).build()) {
            for (String name : NAMES) {
                assertThat(observer.describe(name))
                        .as("nothing held or queued for '" + name + "'")
                        .isEmpty();
            }
        }
    }
}
