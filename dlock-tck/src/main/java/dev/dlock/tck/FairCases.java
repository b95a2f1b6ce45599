package dev.dlock.tck;

import static org.assertj.core.api.Assertions.assertThat;

import dev.dlock.Lease;
import dev.dlock.LockClient;
import java.time.Duration;
import java.util.ArrayList;
import java.util.List;
import java.util.Optional;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.CopyOnWriteArrayList;
import java.util.concurrent.TimeUnit;
import org.junit.jupiter.api.Test;

/**
 * Fair locks: waiters served in arrival order across clients; a waiter that died or was cancelled does not
 * hold up the queue. A store without fair locks must refuse them; each case then asserts the refusal.
 */
abstract class FairCases extends ContractSection {
    FairCases(LockContractTest contract) {
        super(contract);
    }

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
}
