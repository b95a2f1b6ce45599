package dev.dlock.etcd;

import dev.dlock.etcd.LeaseKeeper.EtcdLease;
import dev.dlock.spi.LockKey;
import io.etcd.jetcd.ByteSequence;

/**
 * One acquisition's key: its state (new, waiting, held, ended), its create revision once known and the
 * etcd lease it is on. It keeps no expiry: the engine's watchdog decides when a hold's time is over (and
 * then releases it), bounded by the etcd lease ({@link LeaseKeeper#liveUntilNanos}). Fields are guarded
 * by the hold's monitor, held only for field updates.
 */
final class Hold {
    enum State {
        NEW,
        WAITING,
        HELD,
        ENDED
    }

    final LockKey key;
    final String owner;
    final ByteSequence dir;
    final ByteSequence etcdKey;
    State state = State.NEW;
    long createRevision;
    ByteSequence value;
    EtcdLease lease;

    Hold(LockKey key, String owner, ByteSequence dir) {
        this.key = key;
        this.owner = owner;
        this.dir = dir;
        this.etcdKey = KeyLayout.entryKey(dir, owner);
    }

    /** Under the monitor: from held to ended, giving the lease's hold count back. */
    boolean end() {
        boolean held = state == State.HELD;
        if (held && lease != null) {
            lease.holds.decrementAndGet();
        }
        state = State.ENDED;
        return held;
    }
}
