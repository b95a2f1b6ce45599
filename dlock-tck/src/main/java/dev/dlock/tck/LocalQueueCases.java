package dev.dlock.tck;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;

import dev.dlock.DistributedLock;
import dev.dlock.Lease;
import dev.dlock.LockClient;
import dev.dlock.LockListener;
import dev.dlock.LockRejectedException;
import java.time.Duration;
import java.util.ArrayList;
import java.util.List;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.CopyOnWriteArrayList;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.atomic.AtomicInteger;
import org.junit.jupiter.api.Test;

/**
 * The client's local queue: its limit sheds load, its waiters are served one at a time, and the cohort
 * hand-off between threads of one client keeps fencing tokens inside the room of each store grant.
 */
abstract class LocalQueueCases extends ContractSection {
    LocalQueueCases(LockContractTest contract) {
        super(contract);
    }

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

    /**
     * Cohort hand-off (on by default): threads of two clients loop over one lock. Holders never overlap,
     * tokens increase in grant order, and each grant is either a pass inside one client (previous token
     * + 1, inside the room of its store grant) or a store grant at least {@code LockBackend.tokenBlock()}
     * above the previous store grant, the room the store promised. A store that reserves room must say
     * so ({@code tokenBlock() > 1}, as the contract's {@code reservesTokenRoom()} expects) and must
     * actually have passed holds here: so that a pass is certain to have a taker, each thread's first
     * hold lasts until another thread of its client is in the local queue (told by the client's listener,
     * up to 10 s; on a fast store the threads could otherwise run one after another).
     */
    @Test
    void localHandOffKeepsTokensBetweenStoreGrants() throws Exception {
        List<AtomicInteger> queued = List.of(new AtomicInteger(), new AtomicInteger());
        List<LockClient> cs = List.of(
                client(b -> b.listener(queueLength(queued.get(0)))),
                client(b -> b.listener(queueLength(queued.get(1)))));
        long block = wire(cs.get(0)).tokenBlock();
        if (reservesTokenRoom()) {
            assertThat(block)
                    .as("tokenBlock() of a store that reserves token room (else override reservesTokenRoom())")
                    .isGreaterThan(1);
        } else {
            assertThat(block)
                    .as("tokenBlock() of a store that reserves no token room")
                    .isEqualTo(1);
        }
        History history = new History();
        AtomicInteger next = new AtomicInteger();
        runThreads(6, () -> {
            int c = next.getAndIncrement() % 2;
            DistributedLock lock = cs.get(c).lock("cohort");
            for (int i = 0; i < 15; i++) {
                lock.lock();
                try {
                    boolean first = i == 0;
                    history.record(
                            "cohort",
                            lock.currentLease().orElseThrow().fencingToken(),
                            Thread.currentThread().getName(),
                            () -> {
                                if (first) {
                                    awaitAnotherQueued(queued.get(c));
                                }
                            });
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

    /** A listener that keeps its client's local queue length (all names) in {@code length}. */
    private static LockListener queueLength(AtomicInteger length) {
        return new LockListener() {
            @Override
            public void queued(String name) {
                length.incrementAndGet();
            }

            @Override
            public void dequeued(String name) {
                length.decrementAndGet();
            }
        };
    }

    /**
     * Waits up to 10 s until some caller of the client is queued. The holder's own queued and dequeued
     * events may still be on their way to the listener (delivered in order on its thread, within
     * microseconds): the first look is 1 ms in.
     */
    private static void awaitAnotherQueued(AtomicInteger length) {
        long deadline = System.nanoTime() + TimeUnit.SECONDS.toNanos(10);
        try {
            do {
                Thread.sleep(1);
            } while (length.get() < 1 && System.nanoTime() - deadline < 0);
        } catch (InterruptedException e) {
            Thread.currentThread().interrupt();
        }
    }
}
