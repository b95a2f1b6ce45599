package dev.dlock;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;

import dev.dlock.spi.Mode;
import org.junit.jupiter.api.Test;

/** The stored tags are a storage format: they must not change, and a foreign tag is refused by name. */
class LockKindTest {
    @Test
    void tagsAreTheStoredNamesAndReadBack() {
        assertThat(LockKind.values()).extracting(LockKind::tag).containsExactly("lock", "fair", "rw", "sem");
        for (LockKind kind : LockKind.values()) {
            assertThat(LockKind.ofTag(kind.tag())).isSameAs(kind);
            assertThat(kind).hasToString(kind.tag());
        }
    }

    @Test
    void everyModeBelongsToItsKindAndReadAndWriteShareOne() {
        assertThat(Mode.EXCLUSIVE.kind()).isEqualTo(LockKind.LOCK);
        assertThat(Mode.FAIR.kind()).isEqualTo(LockKind.FAIR);
        assertThat(Mode.READ.kind()).isEqualTo(LockKind.READ_WRITE).isEqualTo(Mode.WRITE.kind());
        assertThat(Mode.PERMIT.kind()).isEqualTo(LockKind.SEMAPHORE);
    }

    @Test
    void anUnknownTagIsRefusedByName() {
        assertThatThrownBy(() -> LockKind.ofTag("LOCK"))
                .isInstanceOf(IllegalArgumentException.class)
                .hasMessageContaining("'LOCK'");
    }
}
