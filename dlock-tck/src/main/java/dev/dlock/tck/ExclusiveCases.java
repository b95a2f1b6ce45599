package dev.dlock.tck;

import static org.assertj.core.api.Assertions.assertThat;

import dev.dlock.DistributedLock;
import dev.dlock.Lease;
import dev.dlock.LockClient;
import java.nio.charset.StandardCharsets;
import java.util.ArrayList;
import java.util.List;
import java.util.Optional;
import org.junit.jupiter.api.Test;

/**
 * Exclusive locks through the {@code Lease} API: one holder at a time, release (idempotent, from any thread),
 * independent names and namespaces, and names of every kind up to the longest allowed.
 */
abstract class ExclusiveCases extends ContractSection {
    ExclusiveCases(LockContractTest contract) {
        super(contract);
    }

    @Test
    void tryAcquireOnFreeLockSucceeds() {
        Optional<Lease> lease = client().lock("free").tryAcquire();
        assertThat(lease).isPresent();
        assertThat(lease.get().isValid()).isTrue();
        assertThat(lease.get().name()).isEqualTo("free");
        lease.get().close();
    }

    @Test
    void secondClientCannotAcquireWhileHeld() {
        LockClient a = client();
        LockClient b = client();
        try (Lease held = a.lock("busy").acquire(LONG_WAIT)) {
            assertThat(b.lock("busy").tryAcquire()).isEmpty();
            assertThat(held.isValid()).isTrue();
        }
    }

    @Test
    void releaseLetsAnotherClientAcquire() {
        LockClient a = client();
        LockClient b = client();
        Lease held = a.lock("handover").acquire(LONG_WAIT);
        held.close();
        assertThat(held.isValid()).isFalse();
        Optional<Lease> next = b.lock("handover").tryAcquire();
        assertThat(next).isPresent();
        next.get().close();
    }

    @Test
    void releaseIsIdempotent() {
        LockClient a = client();
        Lease lease = a.lock("twice").acquire(LONG_WAIT);
        lease.close();
        lease.close();
        Lease other = client().lock("twice").acquire(LONG_WAIT);
        lease.close(); // must not free the new holder's lock
        assertThat(client().lock("twice").tryAcquire()).isEmpty();
        other.close();
    }

    @Test
    void leaseCanBeReleasedFromAnotherThread() throws Exception {
        LockClient a = client();
        Lease lease = a.lock("cross-thread").acquire(LONG_WAIT);
        Thread t = new Thread(lease::close);
        t.start();
        t.join();
        assertThat(lease.isValid()).isFalse();
        assertThat(client().lock("cross-thread").tryAcquire()).isPresent();
    }

    @Test
    void leaseApiIsNotReentrant() {
        DistributedLock lock = client().lock("lease-not-reentrant");
        try (Lease first = lock.acquire(LONG_WAIT)) {
            assertThat(lock.tryAcquire()).isEmpty();
            assertThat(first.isValid()).isTrue();
        }
    }

    @Test
    void locksWithDifferentNamesAreIndependent() {
        LockClient a = client();
        try (Lease x = a.lock("x").acquire(LONG_WAIT);
                Lease y = client().lock("y").acquire(LONG_WAIT)) {
            assertThat(x.isValid()).isTrue();
            assertThat(y.isValid()).isTrue();
        }
    }

    @Test
    void namespacesAreIsolated() {
        LockClient a = client(b -> b.namespace(namespace() + "-a"));
        LockClient b = client(x -> x.namespace(namespace() + "-b"));
        try (Lease x = a.lock("shared-name").acquire(LONG_WAIT);
                Lease y = b.lock("shared-name").acquire(LONG_WAIT)) {
            assertThat(x.isValid() && y.isValid()).isTrue();
        }
    }

    @Test
    void namesWithSpecialCharactersAreDistinctAndWork() {
        List<String> names = List.of(
                "a:b",
                "a",
                "a:b:c",
                "{slot}",
                "}{",
                "a/b",
                "a\\b",
                "'; DROP TABLE x; --",
                "\"quoted\"",
                "with space",
                "ünïcødé-名前-🔒",
                "%",
                "_",
                "*",
                "..",
                "/",
                "\n\t");
        LockClient a = client();
        LockClient b = client();
        List<Lease> leases = new ArrayList<>();
        for (String n : names) {
            Lease lease = a.lock(n).acquire(LONG_WAIT);
            assertThat(lease.name()).isEqualTo(n);
            leases.add(lease);
        }
        for (String n : names) {
            assertThat(b.lock(n).tryAcquire()).as("'%s' is held", n).isEmpty();
        }
        leases.forEach(Lease::close);
        for (String n : names) {
            Optional<Lease> again = b.lock(n).tryAcquire();
            assertThat(again).as("'%s' is free after release", n).isPresent();
            again.get().close();
        }
    }

    @Test
    void longestNameIsAccepted() {
        String name = "n".repeat(1000) + "é".repeat(12); // exactly 1,024 UTF-8 bytes
        assertThat(name.getBytes(StandardCharsets.UTF_8)).hasSize(1024);
        LockClient a = client();
        try (Lease lease = a.lock(name).acquire(LONG_WAIT)) {
            assertThat(client().lock(name).tryAcquire()).isEmpty();
            assertThat(lease.name()).isEqualTo(name);
        }
        String other = "n".repeat(1000) + "é".repeat(11) + "x" + "y";
        try (Lease lease = client().lock(other).acquire(LONG_WAIT)) {
            assertThat(lease.isValid())
                    .as("a name differing only at the end is another lock")
                    .isTrue();
        }
    }
}
