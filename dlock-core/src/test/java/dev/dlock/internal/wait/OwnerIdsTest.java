package dev.dlock.internal.wait;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;

import java.util.HashSet;
import java.util.Set;
import org.junit.jupiter.api.Test;

/** Owner ids: the label, then 32 hex digits of fresh random bits each time, whatever the thread. */
class OwnerIdsTest {
    @Test
    void anIdIsTheLabelAndThirtyTwoHexDigits() {
        OwnerIds ids = new OwnerIds("42@host#");
        assertThat(ids.get()).matches("42@host#[0-9a-f]{32}");
    }

    @Test
    void idsDoNotRepeatOnOneThreadOrAcrossThreads() throws Exception {
        OwnerIds ids = new OwnerIds("1@h#");
        Set<String> seen = new HashSet<>();
        String first = ids.get();
        for (int i = 0; i < 10_000; i++) {
            assertThat(seen.add(ids.get())).isTrue();
        }
        assertThat(first)
                .as("an id is not rewritten by the next one (its scratch array is copied)")
                .isNotIn(seen)
                .matches("1@h#[0-9a-f]{32}");
        String[] fromOther = new String[1];
        Thread other = new Thread(() -> fromOther[0] = ids.get());
        other.start();
        other.join();
        assertThat(fromOther[0]).isNotIn(seen).startsWith("1@h#");
    }

    @Test
    void theProcessLabelIsAsciiAndBounded() {
        assertThat(OwnerIds.processLabel()).matches("\\d+@[A-Za-z0-9._-]+").hasSizeLessThanOrEqualTo(60);
        assertThat(new OwnerIds().get()).startsWith(OwnerIds.processLabel() + "#");
    }

    @Test
    void aLabelThatIsNotAsciiIsRefused() {
        assertThatThrownBy(() -> new OwnerIds("1@hôte#"))
                .isInstanceOf(IllegalArgumentException.class)
                .hasMessageContaining("ASCII");
    }
}
