package dev.dlock.jdbc;

import static org.assertj.core.api.Assertions.assertThat;

import java.util.ArrayList;
import java.util.List;
import org.junit.jupiter.api.Test;

class BackoffTest {
    @Test
    void hintsGrowFromTheBaseToTheCapWithJitter() {
        Backoff backoff = new Backoff();
        List<Long> hints = new ArrayList<>();
        for (int i = 0; i < 12; i++) {
            hints.add(backoff.next("owner", -1));
        }
        assertThat(hints.get(0)).isBetween(Backoff.BASE_MILLIS / 2, Backoff.BASE_MILLIS);
        assertThat(hints).allMatch(h -> h >= Backoff.BASE_MILLIS / 2 && h <= Backoff.MAX_MILLIS);
        assertThat(hints.subList(6, 12)).allMatch(h -> h >= Backoff.MAX_MILLIS / 2);
        java.util.Set<Long> firstHints = new java.util.HashSet<>();
        for (int i = 0; i < 50; i++) {
            firstHints.add(backoff.next("fresh-" + i, -1));
        }
        assertThat(firstHints).as("jittered").hasSizeGreaterThan(1);
    }

    @Test
    void aSoonerExpiryWinsAndForgettingRestarts() {
        Backoff backoff = new Backoff();
        for (int i = 0; i < 8; i++) {
            backoff.next("owner", -1);
        }
        assertThat(backoff.next("owner", 3)).isEqualTo(3);
        backoff.forget("owner");
        assertThat(backoff.next("owner", -1)).isLessThanOrEqualTo(Backoff.BASE_MILLIS);
    }
}
