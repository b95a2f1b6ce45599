package dev.dlock.etcd;

import dev.dlock.etcd.LeaseKeeper.EtcdLease;
import dev.dlock.spi.AcquireRequest;
import java.util.Collections;
import java.util.Map;
import java.util.concurrent.ConcurrentHashMap;

/**
 * The acquisitions of one backend that have a key in etcd (or a key write on its way), by owner id, and
 * what happens to them when they end: an ended hold leaves the map and its watch stops.
 *
 * <p>A hold enters at its first attempt and leaves when it is released or cancelled, found lost at a
 * renewal, or its etcd lease ends. Holds that only wait survive the end of their lease: their create
 * revision is cleared, so the next attempt writes a new key on a new lease.
 *
 * <p>Concurrency: the map is concurrent; a hold's fields change under its monitor, never held across a
 * store call or a call out of this class.
 */
final class Holds {
    private final ConcurrentHashMap<String, Hold> byOwner = new ConcurrentHashMap<>();
    private final Waits waits;
    private final String prefix;

    Holds(Waits waits, String prefix) {
        this.waits = waits;
        this.prefix = prefix;
    }

    /** The request's hold, made at its first attempt. */
    Hold of(AcquireRequest request) {
        return byOwner.computeIfAbsent(
                request.owner(), owner -> new Hold(request.key(), owner, KeyLayout.resourceDir(prefix, request.key())));
    }

    Hold get(String owner) {
        return byOwner.get(owner);
    }

    /** A read-only view, for the administration reads (is a holder of this client?). */
    Map<String, Hold> view() {
        return Collections.unmodifiableMap(byOwner);
    }

    int size() {
        return byOwner.size();
    }

    /** The hold is over: it leaves the map and stops watching. */
    void forget(Hold hold) {
        byOwner.remove(hold.owner, hold);
        waits.stop(hold.owner);
    }

    /** A renewal found a hold gone or its lease ended: it is lost and its key may go. */
    void lost(Hold hold) {
        synchronized (hold) {
            hold.end();
        }
        forget(hold);
    }

    /**
     * An etcd lease ended: every hold on it is lost, and every waiter on it queues again.
     *
     * @return whether any hold on the lease was held (its holder must be told)
     */
    boolean leaseEnded(EtcdLease lease) {
        boolean anyHeld = false;
        for (Hold hold : byOwner.values()) {
            boolean held = false;
            synchronized (hold) {
                if (hold.lease == lease) {
                    if (hold.state == Hold.State.HELD) {
                        held = hold.end();
                    } else if (hold.state != Hold.State.ENDED) {
                        hold.createRevision = 0; // its key goes with the lease: queue again on a new one
                    }
                }
            }
            if (held) {
                anyHeld = true;
                forget(hold);
            }
        }
        return anyHeld;
    }
}
