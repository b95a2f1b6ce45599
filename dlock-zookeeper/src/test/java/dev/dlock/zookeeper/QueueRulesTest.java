package dev.dlock.zookeeper;

import static org.assertj.core.api.Assertions.assertThat;

import dev.dlock.spi.AcquireRequest;
import dev.dlock.spi.LockKey;
import dev.dlock.spi.Mode;
import dev.dlock.zookeeper.NodeLayout.Entry;
import java.util.List;
import org.junit.jupiter.api.Test;

/** The refusal of a downgrade's read whose write entry is gone ({@link QueueRules#downgradeWithoutItsWrite}). */
class QueueRulesTest {
    private static final AcquireRequest DOWNGRADE =
            new AcquireRequest(new LockKey("ns", "rw", Mode.READ), "r0", 30_000, 1, 0, "w0");

    private static Entry write(String owner, long sequence) {
        return new Entry("w-" + owner + "-" + sequence, Mode.WRITE, owner, sequence, -1);
    }

    private static Entry downgradeOf(long writeSequence, long sequence) {
        return new Entry("d-" + writeSequence + "-r0-" + sequence, Mode.READ, "r0", sequence, writeSequence);
    }

    @Test
    void aDowngradeWithItsWriteEntryInTheQueueIsDecidedByTheReadRule() {
        List<Entry> queue = List.of(write("w0", 4), write("w1", 5), downgradeOf(4, 6));
        assertThat(QueueRules.downgradeWithoutItsWrite(DOWNGRADE, queue, 2)).isFalse();
    }

    @Test
    void aDowngradeWhoseWriteEntryIsGoneIsRefusedAlsoWithNoWriterAhead() {
        assertThat(QueueRules.downgradeWithoutItsWrite(DOWNGRADE, List.of(downgradeOf(4, 6)), 0))
                .isTrue();
        assertThat(QueueRules.downgradeWithoutItsWrite(DOWNGRADE, List.of(write("w1", 5), downgradeOf(4, 6)), 1))
                .isTrue();
    }

    @Test
    void aWriteEntryOfAnotherOwnerAtTheSameSequenceIsNotTheDowngradesWrite() {
        // A directory reaped and made again numbers its entries from 0 again.
        List<Entry> queue = List.of(write("w1", 4), downgradeOf(4, 6));
        assertThat(QueueRules.downgradeWithoutItsWrite(DOWNGRADE, queue, 1)).isTrue();
    }

    @Test
    void aPlainReadIsNeverADowngradeWithoutItsWrite() {
        Entry read = new Entry("r-r0-6", Mode.READ, "r0", 6, -1);
        assertThat(QueueRules.downgradeWithoutItsWrite(DOWNGRADE, List.of(read), 0))
                .isFalse();
    }
}
