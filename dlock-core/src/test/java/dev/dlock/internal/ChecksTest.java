package dev.dlock.internal;

import static org.assertj.core.api.Assertions.assertThat;

import dev.dlock.internal.base.Checks;
import java.time.Duration;
import org.junit.jupiter.api.Test;

class ChecksTest {
    @Test
    void saturatedNanosIsExactBelowTheOverflowAndNeverAboveIt() {
        assertThat(Checks.saturatedNanos(Duration.ZERO)).isZero();
        assertThat(Checks.saturatedNanos(Duration.ofMillis(1500))).isEqualTo(1_500_000_000L);
        assertThat(Checks.saturatedNanos(Duration.ofNanos(Long.MAX_VALUE))).isEqualTo(Long.MAX_VALUE);
        assertThat(Checks.saturatedNanos(Duration.ofSeconds(9_223_372_035L, 999_999_999)))
                .isEqualTo(9_223_372_035_999_999_999L);
        assertThat(Checks.saturatedNanos(Duration.ofSeconds(9_223_372_036L, 854_775_808)))
                .isEqualTo(Long.MAX_VALUE);
        assertThat(Checks.saturatedNanos(Duration.ofSeconds(Long.MAX_VALUE))).isEqualTo(Long.MAX_VALUE);
        assertThat(Checks.saturatedNanos(Duration.ofSeconds(Long.MAX_VALUE, 999_999_999)))
                .isEqualTo(Long.MAX_VALUE);
    }
}
