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

        /**
         * The store's clock, as read by the store while it served one request of this client: how the
         * engine sees a store clock stepped forward, which expires every hold there early (a store that
         * counts a hold's time to live on its wall clock: Redis, the SQL lease table).
         *
         * <p>The engine keeps the previous reading of each {@code source}. Between two readings the store's
         * clock may advance at most the client's monotonic time from the first request's sending to the
         * second one's answer, plus the {@link DriftMargin} of that time; when it advanced more, it jumped
         * forward by at least the excess, and the engine moves the local deadline of every lease of this
         * client earlier by the jump, declaring lost at once a lease whose deadline has then passed. A
         * clock stepped back only starts a new baseline: it makes holds last longer at the store.
         *
         * <p>Report the reading of every answer that carries one, in any order and from any thread; readings
         * that overlap or arrive out of order are judged with that in mind. The call returns at once, never
         * blocks and allocates nothing in the common case, so it may be made on a store's I/O thread for
         * every renewal answer. A backend that cannot read its store's clock never calls it.
         *
         * @param source which clock: the server or node that answered (a Redlock or Cluster backend has
         *     several); a name that stays the same for the same clock, for example {@code host:port}
         * @param storeMicros the store's wall clock when it served the request, in microseconds since the
         *     epoch
         * @param sentNanos {@code System.nanoTime()} taken before the request was sent
         * @param answeredNanos {@code System.nanoTime()} taken when its answer arrived, not before {@code
         *     sentNanos}
         * @throws NullPointerException when {@code source} is null (the engine checks)
         * @throws IllegalArgumentException when the answer is dated before the request was sent (the engine
         *     checks)
         */
        default void storeClock(String source, long storeMicros, long sentNanos, long answeredNanos) {}
    }
}
