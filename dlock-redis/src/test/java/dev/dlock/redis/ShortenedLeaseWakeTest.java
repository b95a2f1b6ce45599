package dev.dlock.redis;

import static org.assertj.core.api.Assertions.assertThat;

import dev.dlock.DistributedLock;
import dev.dlock.Lease;
import dev.dlock.LockClient;
import java.time.Duration;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.TimeUnit;
import java.util.function.Function;
import org.junit.jupiter.api.AfterAll;
import org.junit.jupiter.api.BeforeAll;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.Timeout;

/**
 * A holder that cuts an unrenewed lease short ({@link Lease#extend} to less than is left, as the ShedLock
 * provider's unlock does for {@code lockAtLeastFor}) lets a waiter that asked before in at the new expiry:
 * the renewal that shortens a hold publishes the wake-up a release would. Without it the waiter waits for
 * the old expiry (its busy answer's retry time). Both scripts: {@code exclusive.lua} and {@code dlock.lua}
 * (the fair lock).
 */
@Timeout(60)
class ShortenedLeaseWakeTest {
    private static RedisServer server;

    @BeforeAll
    static void start() throws Exception {
        server = RedisServer.start();
    }

    @AfterAll
    static void stop() throws Exception {
        server.close();
    }

    private static void waiterGetsTheLockSoonAfterTheHoldIsCut(Function<LockClient, DistributedLock> lockOf)
            throws Exception {
        try (LockClient holder = LockClient.builder(server.uri())
                        .namespace("shorten")
                        .leaseTime(Duration.ofSeconds(30))
                        .build();
                LockClient other = LockClient.builder(server.uri())
                        .namespace("shorten")
                        .leaseTime(Duration.ofSeconds(30))
                        .build()) {
            Lease held = lockOf.apply(holder).withRenewal(false).acquire(Duration.ofSeconds(5));
            CompletableFuture<Lease> waiter = lockOf.apply(other).acquireAsync(Duration.ofSeconds(20));
            Thread.sleep(500); // its attempts were answered busy, with the 30 s hold's time to wait
            assertThat(waiter).isNotDone();

            held.extend(Duration.ofSeconds(1));
            long cut = System.nanoTime();
            Lease next = waiter.get(20, TimeUnit.SECONDS);
            long waitedMillis = TimeUnit.NANOSECONDS.toMillis(System.nanoTime() - cut);
            assertThat(waitedMillis)
                    .as("granted %d ms after the hold was cut to 1 s", waitedMillis)
                    .isLessThan(5_000); // without the wake-up: 30 s (exclusive), up to 10 s (fair: a queue
            // entry is refreshed every third of the lease time)
            assertThat(held.isValid())
                    .as("the first holder's lease ran out first")
                    .isFalse();
            next.close();
        }
    }

    @Test
    void anExclusiveWaiterThatAskedBeforeTheHoldWasCutGetsItAtTheNewExpiry() throws Exception {
        waiterGetsTheLockSoonAfterTheHoldIsCut(client -> client.lock("report"));
    }

    @Test
    void aFairWaiterThatAskedBeforeTheHoldWasCutGetsItAtTheNewExpiry() throws Exception {
        waiterGetsTheLockSoonAfterTheHoldIsCut(client -> client.fairLock("fair-report"));
    }
}
