package dev.dlock.zookeeper;

import dev.dlock.spi.AcquireRequest;
import dev.dlock.spi.Mode;
import dev.dlock.zookeeper.NodeLayout.Entry;
import java.util.List;

/**
 * Who may be granted in a ZooKeeper queue (fair, read-write, semaphore), given the entries sorted by
 * sequence.
 *
 * <ul>
 *   <li>Fair: the first entry.
 *   <li>Write: the first entry, and only while no read entry of someone else's downgrade ({@code d-})
 *       exists anywhere in the queue: such an entry holds from its creation, behind the writer or not.
 *   <li>Read: no write entry precedes it, except the one it downgrades from and the writers queued
 *       behind that one. A downgrade's read whose write entry is gone is refused instead.
 *   <li>Permit: fewer than {@code permits} entries precede it (decided by the caller).
 * </ul>
 *
 * <p>Concurrency: pure functions.
 */
final class QueueRules {
    private QueueRules() {}

    /** The entry this one waits for, or null when nothing blocks it (semaphores: see the caller). */
    static Entry blocker(AcquireRequest request, List<Entry> queue, int index) {
        switch (request.key().mode()) {
            case FAIR -> {
                return index == 0 ? null : queue.get(index - 1);
            }
            case WRITE -> {
                if (index > 0) {
                    return queue.get(index - 1);
                }
                // First in line, but a downgraded read entry behind it holds (unless it is this writer's own).
                long mine = queue.get(index).sequence();
                for (Entry e : queue) {
                    if (e.downgrade() && e.downgradeOf() != mine) {
                        return e;
                    }
                }
                return null;
            }
            case READ -> {
                int limit = index;
                String downgradeFrom = request.downgradeFrom();
                if (downgradeFrom != null) {
                    for (int i = 0; i < index; i++) {
                        Entry e = queue.get(i);
                        if (e.mode() == Mode.WRITE && e.owner().equals(downgradeFrom)) {
                            limit = i; // writers queued behind the downgrading one do not block it
                            break;
                        }
                    }
                }
                for (int i = limit - 1; i >= 0; i--) {
                    if (queue.get(i).mode() == Mode.WRITE) {
                        return queue.get(i);
                    }
                }
                return null;
            }
            default -> {
                return null;
            }
        }
    }

    /**
     * Whether the entry at {@code index} is a downgrade's read whose write entry (the request's {@code
     * downgradeFrom}, at the sequence the read entry names) is gone: force-released, or ended with its
     * session. Such a read is never granted, wherever it stands: its token would be in the deleted write's
     * room, below a writer granted since, and a writer queued behind the write would wait for it.
     */
    static boolean downgradeWithoutItsWrite(AcquireRequest request, List<Entry> queue, int index) {
        Entry me = queue.get(index);
        if (!me.downgrade()) {
            return false;
        }
        for (Entry e : queue) {
            if (e.mode() == Mode.WRITE
                    && e.sequence() == me.downgradeOf()
                    && e.owner().equals(request.downgradeFrom())) {
                return false;
            }
        }
        return true;
    }

    /** Whether the read entry of someone else's downgrade holds beside a writer. */
    static boolean downgradeBeside(List<Entry> entries, Entry writer) {
        return entries.stream().anyMatch(d -> d.downgrade() && d.downgradeOf() != writer.sequence());
    }
}
