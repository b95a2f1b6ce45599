package dev.dlock.tck;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;

import dev.dlock.Lease;
import dev.dlock.LockBackendException;
import dev.dlock.LockClient;
import dev.dlock.LockTimeoutException;
import java.time.Duration;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.ExecutionException;
import java.util.concurrent.TimeUnit;
import org.junit.jupiter.api.Test;

/**
 * Requests lost in transit: a release, the exit of a cancelled wait from the store's queue, and the
 * give-back of a grant that arrived too late, each sent while the store is cut off, so it never reaches
 * the store. The client stays up and keeps another lock meanwhile, so whatever the store binds to the
 * client's connection, session or keep-alive lives on. The lock must still be free for another client
 * within one lease time plus the operation timeout (and a margin for a loaded machine), counted from the
 * moment the store answers both clients again.
 *
 * <p>Every store takes part: the outage is the store's own {@code stopStore}/{@code startStore} hooks,
 * which every contract test implements (dlock-test-support's {@code TcpProxy} cut for the stores behind one, a killed
 * server or a memory store gone down for the others).
 */
abstract class LostRequestCases extends ContractSection {
    /** Slack for a loaded machine: a wake-up, a retry's back-off. */
    private static final Duration MARGIN = Duration.ofSeconds(5);
    /** The longest wait for a client to reach the store again after the outage. */
    private static final Duration RECONNECT = Duration.ofSeconds(45);

    LostRequestCases(LockContractTest contract) {
        super(contract);
    }

    /** The lease time of the clients here: the other lock must outlive an outage of one operation timeout. */
    private Duration lease() {
        return shortLease().multipliedBy(4);
    }

    /** Sends a request through {@code lostRequest} while the store is cut off; brings the store back. */
    private void whileCutOff(ThrowingRunnable lostRequest) throws Exception {
        stopStore();
        try {
            lostRequest.run();
        } finally {
            startStore();
        }
    }

    /**
     * Waits until the store answers {@code c} again: the first requests after an outage may still fail
     * on connections the outage closed, and a client library takes its own time to reconnect (jetcd took
     * over 20 s once on a loaded machine), which no store can shorten.
     */
    private static void awaitAnswers(LockClient c) throws InterruptedException {
        long start = System.nanoTime();
        while (true) {
            try {
                c.lock("lost-requests-probe").tryAcquire().ifPresent(Lease::close);
                return;
            } catch (LockBackendException e) {
                assertThat(millisSince(start)).as("store answers again: " + e).isLessThan(RECONNECT.toMillis());
                Thread.sleep(100);
            }
        }
    }

    /**
     * Asserts that {@code other} gets the lock within a lease plus the operation timeout once the store
     * answers {@code other} and the client that sent the lost request again.
     */
    private void assertFreeForAnother(LockClient other, String name, LockClient sender) throws InterruptedException {
        awaitAnswers(sender);
        awaitAnswers(other);
        long back = System.nanoTime();
        long bound = lease().plus(operationTimeout()).plus(MARGIN).toMillis();
        Lease next = other.lock(name).acquire(Duration.ofMillis(bound));
        assertThat(millisSince(back))
                .as("'%s' free for another client after (ms)", name)
                .isLessThan(bound);
        next.close();
    }

    @Test
    void aReleaseLostInTransitFreesTheLockWithinALease() throws Exception {
        LockClient a = client(b -> b.leaseTime(lease()));
        LockClient other = client();
        Lease kept = a.lock("lost-release-kept").acquire(LONG_WAIT);
        Lease lease = a.lock("lost-release").acquire(LONG_WAIT);
        whileCutOff(() -> {
            try {
                lease.close();
            } catch (LockBackendException expected) {
                // the release could not be confirmed: the client owes the store a retry
            }
        });
        assertFreeForAnother(other, "lost-release", a);
        kept.close();
    }

    @Test
    void aCancelledWaitWhoseExitIsLostDoesNotBlockTheQueue() throws Exception {
        LockClient holder = client(b -> b.leaseTime(lease()));
        LockClient a = client(b -> b.leaseTime(lease()));
        LockClient other = client();
        Lease held = holder.lock("lost-cancel").acquire(LONG_WAIT);
        Lease kept = a.lock("lost-cancel-kept").acquire(LONG_WAIT);
        CompletableFuture<Lease> waiting = a.lock("lost-cancel").acquireAsync(LONG_WAIT);
        sleep(Duration.ofSeconds(1)); // its attempt reached the store and it waits there
        assertThat(waiting).as("a waits for the held lock").isNotDone();
        whileCutOff(() -> {
            waiting.cancel(true);
            sleep(operationTimeout().plusMillis(500)); // the exit from the queue failed meanwhile
        });
        awaitAnswers(holder);
        held.close();
        assertFreeForAnother(other, "lost-cancel", a);
        kept.close();
    }

    @Test
    void aGiveBackLostInTransitFreesTheLockWithinALease() throws Exception {
        // Calls of a may take longer than the late answer below, so the grant is given back as too late
        // for its lease rather than as the answer to a call that timed out.
        Duration late = shortLease().plusSeconds(1);
        LockClient a = client(b -> b.leaseTime(lease()).operationTimeout(late.plus(operationTimeout())));
        LockClient other = client();
        Lease kept = a.lock("lost-give-back-kept").acquire(LONG_WAIT);
        wire(a).delayAnswers(late);
        CompletableFuture<Lease> tooLate =
                a.lock("lost-give-back").withLeaseTime(shortLease()).acquireAsync(late.plusMillis(500));
        sleep(late.minusMillis(500)); // granted at the store; the answer is still on its way back
        whileCutOff(() -> {
            // The grant arrives after its lease ran out: it is given back while the store is cut off.
            assertThatThrownBy(() -> tooLate.get(LONG_WAIT.toMillis(), TimeUnit.MILLISECONDS))
                    .isInstanceOf(ExecutionException.class)
                    .hasCauseInstanceOf(LockTimeoutException.class);
            sleep(Duration.ofMillis(500)); // the give-back is on its way
            wire(a).delayAnswers(Duration.ZERO);
        });
        assertFreeForAnother(other, "lost-give-back", a);
        kept.close();
    }
}
