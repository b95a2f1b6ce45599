package dev.dlock.tck;

import static org.assertj.core.api.Assertions.assertThat;

import dev.dlock.DistributedLock;
import dev.dlock.Lease;
import dev.dlock.LockClient;
import java.nio.file.Path;
import java.time.Duration;
import java.util.ArrayList;
import java.util.List;
import java.util.Optional;
import org.junit.jupiter.api.AfterEach;
import org.junit.jupiter.api.Test;

/**
 * The examples of {@code LockClient}'s class javadoc, run against the in-memory store; the javadoc holds
 * copies of the regions marked below, and {@link #javadocHoldsTheseExamples()} checks they are the same.
 */
class LockClientExamplesTest {
    private static final Path LOCK_CLIENT = Path.of("../dlock-core/src/main/java/dev/dlock/LockClient.java");
    private static final Path THIS_FILE = Path.of("src/test/java/dev/dlock/tck/LockClientExamplesTest.java");

    private final LockClient observer =
            LockClient.builder("mem:").namespace("billing").build();
    private final List<Long> invoiceTokens = new ArrayList<>();
    private final List<Long> exportTokens = new ArrayList<>();

    @AfterEach
    void close() {
        observer.close();
    }

    @Test
    void javadocHoldsTheseExamples() {
        assertThat(JavadocExamples.check(LOCK_CLIENT, THIS_FILE)).containsExactly("lockclient-basic", "lockclient-try");
    }

    @Test
    void basic() {
        // example: lockclient-basic
        try (LockClient client = LockClient.builder("mem:")
                .leaseTime(Duration.ofSeconds(30))
                .namespace("billing")
                .build()) {
            DistributedLock lock = client.lock("invoice:2026-11");
            try (Lease lease = lock.acquire(Duration.ofSeconds(10))) {
                issueInvoices(lease.fencingToken());
            }
        }
        // end example
        assertThat(invoiceTokens).hasSize(1).allSatisfy(token -> assertThat(token)
                .isPositive());
        assertThat(observer.lock("invoice:2026-11").tryAcquire())
                .as("released at the end")
                .isPresent();
    }

    private void issueInvoices(long fencingToken) {
        assertThat(observer.lock("invoice:2026-11").tryAcquire())
                .as("held while invoicing")
                .isEmpty();
        invoiceTokens.add(fencingToken);
    }

    @Test
    void tryAcquireGivesWayToAnotherHolder() {
        try (LockClient client = LockClient.connect("mem:");
                LockClient other = LockClient.connect("mem:")) {
            try (Lease held = other.lock("nightly-export").acquire(Duration.ofSeconds(5))) {
                exportUnlessRunning(client);
                assertThat(exportTokens)
                        .as("skipped while another client holds the lock")
                        .isEmpty();
            }
            exportUnlessRunning(client);
            assertThat(exportTokens).hasSize(1);
        }
    }

    private void exportUnlessRunning(LockClient client) {
        // example: lockclient-try
        Optional<Lease> maybe = client.lock("nightly-export").tryAcquire();
        if (maybe.isEmpty()) {
            return; // another process is exporting
        }
        try (Lease lease = maybe.get()) {
            export(lease.fencingToken());
        }
        // end example
    }

    private void export(long fencingToken) {
        exportTokens.add(fencingToken);
    }
}
