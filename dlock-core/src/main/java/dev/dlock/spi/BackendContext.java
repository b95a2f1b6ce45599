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
    }
}
