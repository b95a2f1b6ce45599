package dev.dlock.tck;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;

import dev.dlock.DistributedLock;
import dev.dlock.Lease;
import dev.dlock.LeaseLostException;
import dev.dlock.LockBackendException;
import dev.dlock.LockClient;
import dev.dlock.LockTimeoutException;
import java.time.Duration;
import java.util.List;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.TimeUnit;
import java.util.function.Function;
import org.junit.jupiter.api.Test;

/**
 * Leases and fencing tokens: a crashed holder's lease runs out, renewal and {@code extend} keep a lease,
 * answers that arrive after the local deadline neither revive a lease nor hand out a grant, and tokens
 * strictly increase across holders and clients.
 */
abstract class LeaseCases extends ContractSection {
    LeaseCases(LockContractTest contract) {
        super(contract);
    }

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
    void extendWhoseAnswerArrivesAfterTheDeadlineDoesNotReviveTheLease() throws Exception {
        LockClient a = client(b -> b.leaseTime(shortLease()).renewal(false));
        Lease lease = a.lock("extend-race").acquire(LONG_WAIT);
        awaitTrue(shortLease(), () -> lease.remaining().toMillis() < 300);
        wire(a).delayAnswers(Duration.ofMillis(700)); // the answer comes back after the local deadline
        assertThatThrownBy(() -> lease.extend(shortLease())).isInstanceOf(LeaseLostException.class);
        assertThat(lease.isValid()).isFalse();
    }

    /**
     * The store confirms an extend, but its answer comes after the deadline the new lease time gives: the
     * lease can no longer be trusted. Its holder is told at once (not when the old lease would have run
     * out), and the hold is given back, so another client gets the lock at once: a store that keeps a hold
     * for a session (etcd, ZooKeeper) would otherwise keep it with nobody watching.
     */
    @Test
    void anExtendAnsweredAfterItsNewDeadlineIsLostToldAndGivenBack() throws Exception {
        LockClient a = client(b -> b.leaseTime(Duration.ofSeconds(30)));
        Lease lease = a.lock("late-extend").acquire(LONG_WAIT);
        wire(a).delayAnswers(Duration.ofMillis(800)); // within the operation timeout, after the new deadline
        assertThatThrownBy(() -> lease.extend(Duration.ofMillis(300))).isInstanceOf(LeaseLostException.class);
        wire(a).delayAnswers(Duration.ZERO);
        assertThat(lease.isValid()).isFalse();
        assertThat(lease.whenLost().get(5, TimeUnit.SECONDS))
                .as("the holder is told")
                .isInstanceOf(LeaseLostException.class);
        Lease other = client().lock("late-extend").acquire(Duration.ofSeconds(10));
        assertThat(other.isValid()).isTrue();
        other.close();
    }

    /**
     * An extend to a shorter time reaches the store, which applies it, but its answer comes after the
     * operation timeout: the store may let the hold go at the shorter time, while the extend is still on
     * its way and after it failed, so the lease must not stay valid by its old deadline. Whenever another
     * client holds the lock, the first lease is not valid, and its holder is told.
     */
    @Test
    void anUnansweredExtendLeavesNoLeaseValidBesideAnotherHolder() throws Exception {
        LockClient a = client(b -> b.leaseTime(Duration.ofSeconds(30)));
        Lease lease = a.lock("unanswered-extend").acquire(LONG_WAIT);
        wire(a).delayAnswers(operationTimeout().plusSeconds(1)); // reaches the store, answered too late
        int renewals = wire(a).renewalsDone();
        CompletableFuture<Void> extend = CompletableFuture.runAsync(() -> lease.extend(Duration.ofSeconds(1)));
        // B asks once the store applied the extend: a waiter that asked before it would wait for the
        // 30 s hold it saw (a busy answer's retry time), past its 10 s (the CI run of 2026-11-27 on memory).
        long deadline = System.nanoTime() + LONG_WAIT.toNanos();
        while (wire(a).renewalsDone() == renewals && System.nanoTime() - deadline < 0) {
            Thread.sleep(5);
        }
        assertThat(wire(a).renewalsDone()).as("the extend reached the store").isGreaterThan(renewals);
        Lease other = client().lock("unanswered-extend").acquire(Duration.ofSeconds(10));
        assertThat(lease.isValid())
                .as("A's lease (token %d) valid while B holds (token %d)", lease.fencingToken(), other.fencingToken())
                .isFalse();
        assertThatThrownBy(() -> extend.get(LONG_WAIT.toMillis(), TimeUnit.MILLISECONDS))
                .hasCauseInstanceOf(LockBackendException.class);
        assertThat(lease.whenLost().get(5, TimeUnit.SECONDS))
                .as("the holder is told")
                .isInstanceOf(LeaseLostException.class);
        wire(a).delayAnswers(Duration.ZERO);
        other.close();
    }

    /**
     * A holder that cuts its unrenewed lease short ({@link Lease#extend} to less than is left, as the ShedLock
     * provider's unlock does for {@code lockAtLeastFor}) lets in a waiter that asked before, soon after the
     * new expiry: the store wakes waiters when a renewal shortens a hold, as a release does. Without it the
     * waiter waits for the old expiry its busy answer named (30 s here, past its wait).
     */
    @Test
    void aWaiterWhoAskedBeforeAHoldWasCutShortIsGrantedSoonAfterTheNewExpiry() throws Exception {
        waiterIsGrantedSoonAfterTheHoldIsCut(c -> c.lock("cut-short"));
    }

    /**
     * The same as {@link #aWaiterWhoAskedBeforeAHoldWasCutShortIsGrantedSoonAfterTheNewExpiry} for a fair
     * lock (a store without fair locks refuses them).
     */
    @Test
    void aFairWaiterWhoAskedBeforeAHoldWasCutShortIsGrantedSoonAfterTheNewExpiry() throws Exception {
        if (!fairLocksRefused()) {
            waiterIsGrantedSoonAfterTheHoldIsCut(c -> c.fairLock("cut-short-fair"));
        }
    }

    private void waiterIsGrantedSoonAfterTheHoldIsCut(Function<LockClient, DistributedLock> lockOf) throws Exception {
        Lease held = lockOf.apply(client(b -> b.leaseTime(Duration.ofSeconds(30))))
                .withRenewal(false)
                .acquire(LONG_WAIT);
        CompletableFuture<Lease> waiter = lockOf.apply(client()).acquireAsync(LONG_WAIT);
        sleep(Duration.ofMillis(500)); // its attempts were answered busy, with the 30 s hold's time to wait
        assertThat(waiter).as("the waiter waits while the 30 s hold is held").isNotDone();

        held.extend(Duration.ofSeconds(1));
        long cut = System.nanoTime();
        Lease next = waiter.get(LONG_WAIT.toMillis(), TimeUnit.MILLISECONDS);
        long waited = millisSince(cut);
        assertThat(waited)
                .as("granted %d ms after the hold was cut to 1 s", waited)
                .isLessThan(6_000);
        assertThat(held.isValid()).as("the first holder's lease ran out first").isFalse();
        assertThat(next.fencingToken()).isGreaterThan(held.fencingToken());
        next.close();
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
}
