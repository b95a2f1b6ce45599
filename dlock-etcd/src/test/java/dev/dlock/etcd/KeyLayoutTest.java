package dev.dlock.etcd;

import static org.assertj.core.api.Assertions.assertThat;

import dev.dlock.etcd.KeyLayout.Entry;
import dev.dlock.etcd.KeyLayout.Wait;
import dev.dlock.spi.LockKey;
import dev.dlock.spi.Mode;
import java.nio.charset.StandardCharsets;
import java.util.ArrayList;
import java.util.List;
import org.junit.jupiter.api.Test;

class KeyLayoutTest {
    @Test
    void namesCannotLeaveTheirResourceAndKeepPrefixes() {
        String a = KeyLayout.resourceDir("p/", new LockKey("ns", "a/../../other/x", Mode.EXCLUSIVE))
                .toString(StandardCharsets.UTF_8);
        assertThat(a).isEqualTo("p/ns/lock/a%2F..%2F..%2Fother%2Fx/");
        assertThat(KeyLayout.encodeName("50%/é")).isEqualTo("50%25%2Fé");
        assertThat(KeyLayout.decodeName(KeyLayout.encodeName("50%/é"))).isEqualTo("50%/é");
        assertThat(KeyLayout.encodeName("ab/c")).startsWith(KeyLayout.encodeName("ab/"));
    }

    @Test
    void exclusiveFairAndWriteHoldWhenFirstAndWatchTheirPredecessor() {
        for (Mode mode : List.of(Mode.EXCLUSIVE, Mode.FAIR, Mode.WRITE)) {
            List<Entry> q = List.of(entry("a", mode, 5, 0), entry("b", mode, 7, 0), entry("c", mode, 9, 0));
            assertThat(KeyLayout.waitOf(q, 0, 1)).isEqualTo(Wait.NONE);
            assertThat(KeyLayout.waitOf(q, 2, 1)).isEqualTo(Wait.KEY);
            assertThat(KeyLayout.blocker(q, 2).owner()).isEqualTo("b");
        }
    }

    @Test
    void readersWaitOnlyForEarlierWriters() {
        List<Entry> q = List.of(
                entry("r1", Mode.READ, 1, 0),
                entry("r2", Mode.READ, 2, 0),
                entry("w", Mode.WRITE, 3, 0),
                entry("r3", Mode.READ, 4, 0));
        assertThat(KeyLayout.waitOf(q, 1, 1)).isEqualTo(Wait.NONE);
        assertThat(KeyLayout.waitOf(q, 2, 1)).isEqualTo(Wait.KEY);
        assertThat(KeyLayout.blocker(q, 2).owner()).isEqualTo("r2");
        assertThat(KeyLayout.waitOf(q, 3, 1)).isEqualTo(Wait.KEY);
        assertThat(KeyLayout.blocker(q, 3).owner()).isEqualTo("w");
    }

    @Test
    void aDowngradedReadSortsRightAfterItsWriteAndHoldsBeforeQueuedWriters() {
        List<Entry> q = new ArrayList<>(
                List.of(entry("w", Mode.WRITE, 3, 0), entry("w2", Mode.WRITE, 4, 0), entry("r", Mode.READ, 5, 3)));
        q.sort(KeyLayout.QUEUE_ORDER);
        assertThat(q).extracting(Entry::owner).containsExactly("w", "r", "w2");
        assertThat(KeyLayout.waitOf(q, 1, 1)).isEqualTo(Wait.NONE);
        q.remove(0); // the write is released: the queued writer still waits for the read
        assertThat(KeyLayout.waitOf(q, 1, 1)).isEqualTo(Wait.KEY);
        assertThat(KeyLayout.blocker(q, 1).owner()).isEqualTo("r");
    }

    @Test
    void aDowngradedReadsTokenIsTheLastOfItsWritesRoom() {
        Entry write = entry("w", Mode.WRITE, 3, 0);
        Entry queued = entry("w2", Mode.WRITE, 4, 0);
        Entry read = entry("r", Mode.READ, 5, 3);
        assertThat(KeyLayout.token(write)).isEqualTo(48);
        assertThat(KeyLayout.token(read))
                .as("above the write's grant and its 14 passes, below the writer queued meanwhile")
                .isEqualTo(48 + 15)
                .isGreaterThan(KeyLayout.token(write) + dev.dlock.spi.OrderTokens.BLOCK - 1)
                .isLessThan(KeyLayout.token(queued));
    }

    @Test
    void theFirstPermitsKeysOfASemaphoreHold() {
        List<Entry> q =
                List.of(entry("a", Mode.PERMIT, 1, 0), entry("b", Mode.PERMIT, 2, 0), entry("c", Mode.PERMIT, 3, 0));
        assertThat(KeyLayout.waitOf(q, 1, 2)).isEqualTo(Wait.NONE);
        assertThat(KeyLayout.waitOf(q, 2, 2)).isEqualTo(Wait.ANY);
        assertThat(KeyLayout.waitOf(q, 2, 3)).isEqualTo(Wait.NONE);
    }

    private static Entry entry(String owner, Mode mode, long revision, long sortRevision) {
        return new Entry(owner, mode, 2, sortRevision, revision, 1);
    }
}
