package dev.dlock.spi;

import java.time.Duration;
import java.util.Objects;

/**
 * What the engine hands a backend when it opens it.
 *
 * @param uri the URI the client was built from, or null when built from a {@link LockBackendFactory}
 * @param operationTimeout the longest one store operation may take; the engine enforces it too, but a
 *     backend should configure its client so that connects and commands give up by then
 * @param events where a backend reports what only it can see
 */
public record BackendContext(String uri, Duration operationTimeout, BackendEvents events) {
    /**
     * Checks that the timeout and events are present.
     *
     * @param uri as described on the record
     * @param operationTimeout as described on the record
     * @param events as described on the record
     */
    public BackendContext {
        Objects.requireNonNull(operationTimeout, "operationTimeout");
        Objects.requireNonNull(events, "events");
    }

    /** Callbacks from a backend into the engine. Implementations return at once and never block. */
    public interface BackendEvents {
        /**
         * Every lease this client holds is gone (for example the ZooKeeper session expired). The engine
         * marks them lost and fires their lost signals.
         *
         * @param reason a short human-readable cause, used in {@code LeaseLostException} messages
         */
        void allLeasesLost(String reason);

        /**
         * The leases of this backend are one session of its store ({@link SessionLeases}): the engine's
         * watchdog bounds every lease by the session and releases at the store a lease whose own time
         * passed. Called at most once, while the backend opens; stores with a time to live per hold never
         * call it.
         *
         * @param session what the backend knows of its session
         */
        default void leasesAreSession(SessionLeases session) {}
    }
}
