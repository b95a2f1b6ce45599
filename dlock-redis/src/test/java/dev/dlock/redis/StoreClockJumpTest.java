package dev.dlock.redis;

import static org.assertj.core.api.Assertions.assertThat;

import dev.dlock.Lease;
import dev.dlock.LeaseLostException;
import dev.dlock.LockClient;
import dev.dlock.LockListener;
import dev.dlock.testsupport.RedisProcess;
import dev.dlock.testsupport.SteppedClock;
import java.time.Duration;
import java.util.concurrent.CountDownLatch;
import java.util.concurrent.TimeUnit;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.Timeout;

/**
 * A {@code redis-server} whose wall clock is stepped forward ({@link SteppedClock}) expires every hold
 * early; the holder's client sees the step in the server time its renewal answers carry and cuts its
 * leases' deadlines by it.
 */
@Timeout(120)
class StoreClockJumpTest {
    private static final Duration LEASE = Duration.ofSeconds(6);

    /** A client whose renewal batches count down {@code renewals}. */
    private static LockClient client(RedisProcess redis, CountDownLatch renewals) {
        return LockClient.builder(redis.uri() + "?unsafeGrantAfterRestart=true")
                .leaseTime(LEASE)
                .namespace("jump")
                .listener(new LockListener() {
                    @Override
                    public void renewed(int leases, int lost) {
                        renewals.countDown();
                    }
                })
                .build();
    }

    /**
     * A step larger than the lease: the hold is gone at the server at once, and the holder's next renewal
     * answer tells it why (without the check it would only hear that the server no longer held it).
     */
    @Test
    void aHolderLearnsOfTheStepAtItsNextRenewal() throws Exception {
        SteppedClock clock = new SteppedClock();
        CountDownLatch renewed = new CountDownLatch(1);
        try (RedisProcess redis = RedisProcess.start(clock);
                LockClient holder = client(redis, renewed);
                LockClient other = client(redis, new CountDownLatch(1))) {
            Lease held = holder.lock("step").acquire(Duration.ofSeconds(10));
            assertThat(renewed.await(30, TimeUnit.SECONDS))
                    .as("a first renewal, the baseline")
                    .isTrue();
            clock.step(Duration.ofMillis(7_000));
            Lease successor = other.lock("step").acquire(Duration.ofSeconds(30));
            LeaseLostException lost = held.whenLost().get(30, TimeUnit.SECONDS);
            assertThat(lost.getMessage())
                    .contains("the store's clock (" + redis.uri())
                    .contains("jumped forward by");
            assertThat(held.isValid()).isFalse();
            successor.close();
        }
    }

    /**
     * A lease that is not renewed (20 s) and a renewing one on the same client, the server's clock stepped
     * 10 s: the renewing lease's next answer shows the step, the quiet lease's deadline moves 10 s earlier,
     * and it ends before the server lets another client take it (without the check it would be believed
     * for 10 s more while the other client holds it).
     */
    @Test
    void aLeaseNotRenewedEndsBeforeAnotherClientIsGranted() throws Exception {
        SteppedClock clock = new SteppedClock();
        CountDownLatch renewed = new CountDownLatch(1);
        try (RedisProcess redis = RedisProcess.start(clock);
                LockClient holder = client(redis, renewed);
                LockClient other = client(redis, new CountDownLatch(1))) {
            Lease quiet = holder.lock("quiet")
                    .withLeaseTime(Duration.ofSeconds(20))
                    .withRenewal(false)
                    .acquire(Duration.ofSeconds(10));
            holder.lock("busy").acquire(Duration.ofSeconds(10));
            assertThat(renewed.await(30, TimeUnit.SECONDS))
                    .as("a first renewal, the baseline")
                    .isTrue();
            Duration before = quiet.remaining();
            clock.step(Duration.ofSeconds(10));
            Lease successor = other.lock("quiet").acquire(Duration.ofSeconds(60));
            assertThat(quiet.isValid())
                    .as("the quiet lease (%s left before the step) when another client was granted", before)
                    .isFalse();
            successor.close();
        }
    }
}
