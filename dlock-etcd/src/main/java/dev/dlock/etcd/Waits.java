package dev.dlock.etcd;

import dev.dlock.spi.Mode;
import dev.dlock.spi.WakeListener;
import io.etcd.jetcd.ByteSequence;
import io.etcd.jetcd.Watch;
import io.etcd.jetcd.options.WatchOption;
import java.util.List;
import java.util.concurrent.ConcurrentHashMap;
import java.util.concurrent.CopyOnWriteArrayList;

/**
 * The watches of waiting acquisitions and the engine's wake-up listeners.
 *
 * <p>A waiting acquisition has at most one watch: on the one key it waits for, or (semaphore) on the
 * deletions under its resource. The watch starts at the revision after the queue read that found the
 * blocker, so a deletion between the read and the watch is still delivered. The first deletion event (or
 * a watch error) ends the watch and wakes the resource's listeners; the engine then tries again, which
 * reads the queue and watches the next blocker if it still waits. Only deletions are delivered (a put on
 * the watched key, such as a lease move, is filtered out by the server).
 *
 * <p>Concurrency: the maps are concurrent; a watch is replaced by a put and ended by a conditional
 * remove, so an event for a replaced watch wakes nobody.
 */
final class Waits {
    private final Watch watch;
    private final ConcurrentHashMap<ByteSequence, List<WakeListener>> listeners = new ConcurrentHashMap<>();
    private final ConcurrentHashMap<String, Active> active = new ConcurrentHashMap<>();

    Waits(Watch watch) {
        this.watch = watch;
    }

    /** One waiter's watch. */
    private static final class Active {
        final Hold hold;
        final ByteSequence target;
        final boolean resource;
        volatile Watch.Watcher watcher;
        volatile boolean closed;

        Active(Hold hold, ByteSequence target, boolean resource) {
            this.hold = hold;
            this.target = target;
            this.resource = resource;
        }

        void close() {
            closed = true;
            Watch.Watcher w = watcher;
            if (w != null) {
                w.close();
            }
        }
    }

    List<WakeListener> listeners(ByteSequence dir) {
        return listeners.computeIfAbsent(dir, d -> new CopyOnWriteArrayList<>());
    }

    void remove(ByteSequence dir, WakeListener listener) {
        listeners.computeIfPresent(dir, (d, list) -> {
            list.remove(listener);
            return list.isEmpty() ? null : list;
        });
    }

    /**
     * Watches for the deletion of {@code key} (or of any key of the waiter's resource when null) from
     * {@code fromRevision} on, unless the waiter already watches exactly that.
     */
    void watch(Hold hold, ByteSequence key, long fromRevision) {
        boolean resource = key == null;
        ByteSequence target = resource ? hold.dir : key;
        Active current = active.get(hold.owner);
        if (current != null && current.resource == resource && current.target.equals(target)) {
            return;
        }
        Active next = new Active(hold, target, resource);
        Active old = active.put(hold.owner, next);
        if (old != null) {
            old.close();
        }
        WatchOption option = WatchOption.builder()
                .withRevision(fromRevision)
                .withNoPut(true)
                .isPrefix(resource)
                .build();
        next.watcher = watch.watch(
                target,
                option,
                Watch.listener(
                        answer -> {
                            if (!answer.getEvents().isEmpty()) {
                                gone(next);
                            }
                        },
                        error -> gone(next)));
        if (next.closed || active.get(hold.owner) != next) {
            next.close(); // stopped while the watch was being set up
        }
    }

    private void gone(Active watch) {
        if (active.remove(watch.hold.owner, watch)) {
            watch.close();
            List<WakeListener> list = listeners.get(watch.hold.dir);
            if (list != null) {
                String next = watch.hold.key.mode() == Mode.FAIR ? watch.hold.owner : null;
                for (WakeListener listener : list) {
                    listener.wake(next);
                }
            }
        }
    }

    /** Ends a waiter's watch (it holds now, or gave up). */
    void stop(String owner) {
        Active a = active.remove(owner);
        if (a != null) {
            a.close();
        }
    }

    void close() {
        for (Active a : active.values()) {
            a.close();
        }
        active.clear();
        listeners.clear();
    }
}
