package dev.dlock.mem;

import static org.assertj.core.api.Assertions.assertThat;

import dev.dlock.Lease;
import dev.dlock.LockClient;
import java.time.Duration;
import java.util.ArrayList;
import java.util.List;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.ThreadLocalRandom;
import java.util.concurrent.TimeUnit;
import org.junit.jupiter.api.AfterEach;
import org.junit.jupiter.api.Test;

/**
 * A holder that shortens an unrenewed lease ({@link Lease#extend} to less than is left, as the ShedLock
 * provider's unlock does for {@code lockAtLeastFor}) lets waiters that asked before in at the new expiry,
 * not the old one: the memory store wakes them as a release does.
 */
class MemoryStoreShortenTest {
    private final String uri =
            "mem:shorten-" + Long.toHexString(ThreadLocalRandom.current().nextLong());
    private final List<LockClient> clients = new ArrayList<>();

    private LockClient client() {
        LockClient c = LockClient.builder(uri).leaseTime(Duration.ofSeconds(30)).build();
        clients.add(c);
        return c;
    }

    @AfterEach
    void close() {
        clients.forEach(LockClient::close);
    }

    @Test
    void aWaiterThatAskedBeforeAHolderShortenedItsLeaseIsGrantedAtTheNewExpiry() throws Exception {
        Lease held = client().lock("report").withRenewal(false).acquire(Duration.ofSeconds(5));
        CompletableFuture<Lease> waiter = client().lock("report").acquireAsync(Duration.ofSeconds(15));
        Thread.sleep(500); // its attempts were answered busy, with the 30 s hold's time to wait
        assertThat(waiter).isNotDone();

        held.extend(Duration.ofSeconds(1));
        long shortened = System.nanoTime();
        Lease next = waiter.get(15, TimeUnit.SECONDS);
        long waitedMillis = TimeUnit.NANOSECONDS.toMillis(System.nanoTime() - shortened);
        assertThat(waitedMillis)
                .as("granted %d ms after the hold was cut to 1 s", waitedMillis)
                .isLessThan(10_000);
        assertThat(held.isValid()).as("the first holder's lease ran out first").isFalse();
        next.close();
    }
}
