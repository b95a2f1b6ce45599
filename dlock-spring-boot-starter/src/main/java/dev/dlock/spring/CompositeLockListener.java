package dev.dlock.spring;

import dev.dlock.LockListener;
import java.time.Duration;
import java.util.List;
import java.util.function.Consumer;

/**
 * Hands every event to each of several {@link LockListener} beans in order.
 *
 * <p>Concurrency: stateless; called on whatever thread the event happens on.
 *
 * <p>Failure modes: a listener that throws does not keep the others from hearing the event, and the
 * exception goes no further (listeners must not break locking).
 */
final class CompositeLockListener implements LockListener {
    private final List<LockListener> listeners;

    private CompositeLockListener(List<LockListener> listeners) {
        this.listeners = List.copyOf(listeners);
    }

    /** One listener for all, or null when there are none. */
    static LockListener of(List<LockListener> listeners) {
        if (listeners.isEmpty()) {
            return null;
        }
        return listeners.size() == 1 ? listeners.get(0) : new CompositeLockListener(listeners);
    }

    private void each(Consumer<LockListener> event) {
        for (LockListener listener : listeners) {
            try {
                event.accept(listener);
            } catch (RuntimeException ignored) {
                // A listener must not keep the others from hearing the event.
            }
        }
    }

    @Override
    public void acquired(String name, Duration waited) {
        each(l -> l.acquired(name, waited));
    }

    @Override
    public void failed(String name, Duration waited, Throwable cause) {
        each(l -> l.failed(name, waited, cause));
    }

    @Override
    public void queued(String name) {
        each(l -> l.queued(name));
    }

    @Override
    public void dequeued(String name) {
        each(l -> l.dequeued(name));
    }

    @Override
    public void rejected(String name) {
        each(l -> l.rejected(name));
    }

    @Override
    public void released(String name, Duration held) {
        each(l -> l.released(name, held));
    }

    @Override
    public void renewed(int leases, int lost) {
        each(l -> l.renewed(leases, lost));
    }

    @Override
    public void lost(String name, String reason) {
        each(l -> l.lost(name, reason));
    }

    @Override
    public void heldBack(String name, Duration left) {
        each(l -> l.heldBack(name, left));
    }
}
