package dev.dlock.tck;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;

import dev.dlock.Lease;
import dev.dlock.LockClient;
import java.time.Duration;
import org.junit.jupiter.api.Test;

/**
 * Bad input: names, durations, counts, options and URIs that are refused with a message naming the
 * problem.
 */
abstract class BadInputCases extends ContractSection {
    BadInputCases(LockContractTest contract) {
        super(contract);
    }

    @Test
    void badNamesAreRejectedWithAClearMessage() {
        LockClient a = client();
        assertThatThrownBy(() -> a.lock(null))
                .isInstanceOf(IllegalArgumentException.class)
                .hasMessageContaining("null");
        assertThatThrownBy(() -> a.lock(""))
                .isInstanceOf(IllegalArgumentException.class)
                .hasMessageContaining("empty");
        assertThatThrownBy(() -> a.lock("x".repeat(1025)))
                .isInstanceOf(IllegalArgumentException.class)
                .hasMessageContaining("1025")
                .hasMessageContaining("1024");
        assertThatThrownBy(() -> a.lock("é".repeat(513)))
                .as("the limit counts UTF-8 bytes, not characters")
                .isInstanceOf(IllegalArgumentException.class);
        assertThatThrownBy(() -> a.lock("nul\0"))
                .isInstanceOf(IllegalArgumentException.class)
                .hasMessageContaining("NUL");
        assertThatThrownBy(() -> a.lock("\uD800"))
                .isInstanceOf(IllegalArgumentException.class)
                .hasMessageContaining("surrogate");
        assertThatThrownBy(() -> a.multiLock()).isInstanceOf(IllegalArgumentException.class);
        assertThatThrownBy(() -> a.multiLock("ok", "")).isInstanceOf(IllegalArgumentException.class);
    }

    @Test
    void adminCallsRejectBadNamesAsBadInput() {
        LockClient a = client();
        assertThatThrownBy(() -> a.describe(""))
                .isInstanceOf(IllegalArgumentException.class)
                .hasMessageContaining("empty");
        assertThatThrownBy(() -> a.forceRelease(null)).isInstanceOf(IllegalArgumentException.class);
        assertThatThrownBy(() -> a.list(null)).isInstanceOf(IllegalArgumentException.class);
    }

    @Test
    void badDurationsAndCountsAreRejected() {
        LockClient a = client();
        assertThatThrownBy(() -> a.lock("d").acquire(Duration.ofMillis(-1)))
                .isInstanceOf(IllegalArgumentException.class)
                .hasMessageContaining("negative");
        assertThatThrownBy(() -> a.lock("d").acquire(null)).isInstanceOf(IllegalArgumentException.class);
        assertThatThrownBy(() -> a.lock("d").withLeaseTime(Duration.ZERO))
                .isInstanceOf(IllegalArgumentException.class)
                .hasMessageContaining("leaseTime");
        assertThatThrownBy(() -> a.semaphore("s", 0))
                .isInstanceOf(IllegalArgumentException.class)
                .hasMessageContaining("permits");
        assertThatThrownBy(() -> a.semaphore("s", -3)).isInstanceOf(IllegalArgumentException.class);
        assertThatThrownBy(() -> newClientBuilder().leaseTime(Duration.ofSeconds(-1)))
                .isInstanceOf(IllegalArgumentException.class);
        assertThatThrownBy(() -> newClientBuilder().operationTimeout(Duration.ZERO))
                .isInstanceOf(IllegalArgumentException.class);
        assertThatThrownBy(() -> newClientBuilder().localQueueLimit(0)).isInstanceOf(IllegalArgumentException.class);
        assertThatThrownBy(() -> newClientBuilder().namespace("has space"))
                .isInstanceOf(IllegalArgumentException.class);
        try (Lease lease = a.lock("d").acquire(LONG_WAIT)) {
            assertThatThrownBy(() -> lease.extend(Duration.ofSeconds(-1))).isInstanceOf(IllegalArgumentException.class);
        }
    }

    @Test
    void durationsTooLongToComputeWithAreRejected() {
        Duration forever = Duration.ofSeconds(Long.MAX_VALUE);
        assertThatThrownBy(() -> newClientBuilder().leaseTime(forever))
                .isInstanceOf(IllegalArgumentException.class)
                .hasMessageContaining("leaseTime");
        assertThatThrownBy(() -> newClientBuilder().operationTimeout(forever))
                .isInstanceOf(IllegalArgumentException.class)
                .hasMessageContaining("operationTimeout");
        try (Lease lease = client().lock("forever").acquire(forever)) {
            assertThatThrownBy(() -> lease.extend(forever)).isInstanceOf(IllegalArgumentException.class);
            assertThat(lease.isValid()).isTrue();
        }
    }

    @Test
    void unknownUriSchemeIsRejected() {
        assertThatThrownBy(() -> LockClient.connect("nosuchstore://user:sentinel-secret@x"))
                .isInstanceOf(IllegalArgumentException.class)
                .hasMessageContaining("nosuchstore:")
                .hasMessageNotContaining("sentinel-secret"); // the rest of a URI may hold a password
    }
}
