package dev.dlock.internal;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;

import dev.dlock.internal.base.Nanos;
import org.junit.jupiter.api.Test;

/** The engine's clock outside the model checker's JVM: the system's, and its test mode refused. */
class NanosTest {
    @Test
    void readsTheSystemClockAndRefusesTheTestModeRestart() {
        assertThat(Nanos.ticking()).isFalse();
        long before = System.nanoTime();
        long now = Nanos.now();
        assertThat(now - before).isNotNegative();
        assertThat(System.nanoTime() - now).isNotNegative();
        assertThatThrownBy(Nanos::restartTicks)
                .isInstanceOf(IllegalStateException.class)
                .hasMessageContaining("dlock.test.tickingClock");
    }
}
