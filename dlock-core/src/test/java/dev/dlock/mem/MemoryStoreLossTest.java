package dev.dlock.mem;

import static org.assertj.core.api.Assertions.assertThat;

import dev.dlock.Lease;
import dev.dlock.LeaseLostException;
import dev.dlock.LockClient;
import dev.dlock.LockInfo;
import java.time.Duration;
import java.util.List;
import java.util.concurrent.ThreadLocalRandom;
import org.junit.jupiter.api.AfterEach;
import org.junit.jupiter.api.Test;

/**
 * Told first on the memory store: after {@link MemoryStore#forgetEverything()} nobody is granted a lock
 * whose forgotten lease may still run by its holder's clock, and that holder is told it lost the lease
 * before the next grant.
 */
class MemoryStoreLossTest {
    /**
     * Long enough that the first test's questions (a zero wait, describe, the namespace's hold-back) all
     * come before the hold-back ends on a loaded machine; the test waits it out once.
     */
    private static final Duration LEASE = Duration.ofSeconds(3);

    private final String storeName =
            "loss-" + Long.toHexString(ThreadLocalRandom.current().nextLong());
    private final MemoryStore store = MemoryStore.named(storeName);
    private final List<LockClient> clients = new java.util.ArrayList<>();

    private LockClient client(String namespace) {
        return client(namespace, LEASE);
    }

    private LockClient client(String namespace, Duration lease) {
        LockClient c = LockClient.builder("mem:" + storeName)
                .namespace(namespace)
                .leaseTime(lease)
                .build();
        clients.add(c);
        return c;
    }

    @AfterEach
    void close() {
        clients.forEach(LockClient::close);
    }

    @Test
    void aForgottenHolderIsToldBeforeAnyoneElseIsGranted() throws Exception {
        LockClient first = client("orders");
        LockClient second = client("orders");
        Lease held = first.lock("x").acquire(Duration.ofSeconds(5));

        long lostAt = System.nanoTime();
        store.forgetEverything();

        assertThat(second.lock("x").tryAcquire())
                .as("a zero wait during the hold-back")
                .isEmpty();
        LockInfo info = second.describe("x").get(0);
        assertThat(info.holders()).as("the store forgot the holder").isEmpty();
        assertThat(info.heldBack()).as("describe shows the hold-back").isPositive();
        assertThat(second.heldBack())
                .as("so does the namespace, without a lock name")
                .isPositive()
                .isLessThanOrEqualTo(LEASE.plus(Duration.ofMillis(100)));

        try (Lease next = second.lock("x").acquire(Duration.ofSeconds(5))) {
            assertThat(Duration.ofNanos(System.nanoTime() - lostAt))
                    .as("granted only once the forgotten lease could have run out")
                    .isGreaterThanOrEqualTo(LEASE);
            assertThat(held.isValid())
                    .as("the old holder no longer believes it holds")
                    .isFalse();
            assertThat(held.whenLost().isDone() && !held.whenLost().isCancelled())
                    .as("the old holder was told it lost the lease (not a clean end)")
                    .isTrue();
            assertThat(held.whenLost().join()).isInstanceOf(LeaseLostException.class);
            assertThat(next.fencingToken()).as("tokens survive the loss").isGreaterThan(held.fencingToken());
        }
    }

    /**
     * The busy namespace's lease is long (30 s) so that its hold-back is still running when it is asked
     * last, however slow the machine: with a 600 ms lease a loaded dry run asked after it had ended.
     */
    @Test
    void aNamespaceWithoutGrantsBeforeTheLossIsNotHeldBack() {
        Duration longLease = Duration.ofSeconds(30);
        client("busy", longLease).lock("x").acquire(Duration.ofSeconds(5));
        store.forgetEverything();

        LockClient fresh = client("fresh");
        assertThat(fresh.heldBack()).isZero();
        try (Lease lease = fresh.lock("x").tryAcquire().orElseThrow()) {
            assertThat(lease.isValid()).isTrue();
        }
        assertThat(client("busy", longLease).lock("y").tryAcquire())
                .as("the namespace that had grants is held back on every name")
                .isEmpty();
    }
}
