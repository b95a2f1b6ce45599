package dev.dlock.spi;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;

import org.junit.jupiter.api.Test;

class OrderTokensTest {
    @Test
    void aGrantsRoomHoldsThePassesAndThenTheDowngradedReadBelowTheNextOrder() {
        long grant = OrderTokens.ofCreation(7);
        assertThat(grant).isEqualTo(112);
        assertThat(OrderTokens.ofDowngradedRead(7))
                .isEqualTo(grant + OrderTokens.BLOCK)
                .isGreaterThan(grant + OrderTokens.BLOCK - 1) // the last pass
                .isLessThan(OrderTokens.ofCreation(8));
    }

    @Test
    void anOrderTooLargeToScaleFailsInsteadOfWrapping() {
        long largest = Long.MAX_VALUE / OrderTokens.SCALE;
        assertThat(OrderTokens.ofCreation(largest)).isPositive();
        assertThatThrownBy(() -> OrderTokens.ofCreation(largest + 1)).isInstanceOf(ArithmeticException.class);
        assertThat(OrderTokens.ofDowngradedRead(largest)).isEqualTo(Long.MAX_VALUE);
        assertThatThrownBy(() -> OrderTokens.ofDowngradedRead(largest + 1)).isInstanceOf(ArithmeticException.class);
    }
}
