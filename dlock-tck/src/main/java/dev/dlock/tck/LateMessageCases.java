package dev.dlock.tck;

import static org.assertj.core.api.Assertions.assertThat;

import dev.dlock.Lease;
import dev.dlock.LockClient;
import java.time.Duration;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.TimeUnit;
import org.junit.jupiter.api.Test;

/**
 * Messages the client gave up on: a request that reaches the store after the engine stopped waiting for
 * it (past the operation timeout) must never act on a later grant of the same client.
 */
abstract class LateMessageCases extends ContractSection {
    LateMessageCases(LockContractTest contract) {
        super(contract);
    }

    /**
     * A grant arrives after its lease ran out, so the engine gives it back and asks again; the give-back is
     * stuck on its way past the operation timeout, so the retry is granted first. When the give-back then
     * reaches the store it must not remove the retry's grant: another client still cannot get the lock.
     */
    @Test
    void aLateGiveBackOvertakenByTheRetryDoesNotRemoveTheRetrysGrant() throws Exception {
        // The late grant's answer must come within the operation timeout (else the attempt fails and the
        // wait ends): a lease plus 300 ms on the way back, plus the store's own time for the attempt.
        Duration timeout = shortLease().multipliedBy(2).plusSeconds(1);
        LockClient a = client(b -> b.leaseTime(shortLease()).operationTimeout(timeout));
        FreezableBackend wire = wire(a);
        wire.delayNextAcquireAnswer(shortLease().plusMillis(300));
        FreezableBackend.HeldRequest giveBack = wire.holdNextRelease();
        CompletableFuture<Lease> acquired = a.lock("late-give-back").acquireAsync(LONG_WAIT);
        awaitTrue(shortLease().plus(timeout).plusSeconds(5), giveBack::caught);
        // The retry is sent and, on a store that lets a hold run out by its lease time, granted before the
        // give-back arrives; a store that keeps the old grant until the give-back may not answer it yet.
        awaitTrue(timeout.plusSeconds(10), () -> wire.acquiresSent() >= 2);
        long until = System.nanoTime() + timeout.toNanos();
        while (wire.acquireAnswers() < 2 && System.nanoTime() - until < 0) {
            Thread.sleep(10);
        }
        giveBack.send().get(LONG_WAIT.toMillis(), TimeUnit.MILLISECONDS);
        Lease lease = acquired.get(LONG_WAIT.toMillis(), TimeUnit.MILLISECONDS);
        assertThat(client().lock("late-give-back").tryAcquire())
                .as(
                        "another client got the lock while A's lease (token %d) is valid: %s",
                        lease.fencingToken(), lease.isValid())
                .isEmpty();
        assertThat(lease.isValid()).isTrue();
        lease.close();
    }
}
