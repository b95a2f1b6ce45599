package dev.dlock.internal.view;

import dev.dlock.internal.lease.HeldLease;
import java.util.HashMap;

/**
 * Thread-owned holds of the {@code Lock} view, with reentrancy counts.
 *
 * <p>Design: each thread keeps its own map from resource (a {@code LockKey}, or a list of them for a
 * multi-lock) to its hold, in a thread-local of this client. Only the thread itself creates, changes and
 * removes its entries, so nothing needs synchronisation, and a look-up allocates no key (the lock and
 * unlock of every {@code Lock} call look three times). A thread that ends takes its map with it (the
 * watchdog releases its leases), so nothing here outlives the threads.
 */
public final class Holds {
    private final ThreadLocal<HashMap<Object, Hold>> holds = ThreadLocal.withInitial(HashMap::new);

    static final class Hold {
        final HeldLease lease;
        int count = 1;

        Hold(HeldLease lease) {
            this.lease = lease;
        }
    }

    Hold current(Object resource) {
        return holds.get().get(resource);
    }

    void put(Object resource, Hold hold) {
        holds.get().put(resource, hold);
    }

    void remove(Object resource) {
        holds.get().remove(resource);
    }

    /** No holds yet. */
    public Holds() {}
}
