package dev.dlock.internal;

import dev.dlock.LockListener;
import dev.dlock.internal.base.ListenerEvents;
import java.time.Duration;

/**
 * A client's options as the engine reads them: the immutable snapshot {@code LockClient.Builder}, the one
 * builder, takes when it builds. Every value was checked (and a lease time converted to milliseconds)
 * once, by the builder's setter; the engine converts and checks nothing again. Not part of the API:
 * public only so that {@code dev.dlock} can hand it to {@link Engine#open}.
 *
 * @param leaseMillis default lease time of grants, in milliseconds
 * @param renewal whether leases are renewed in the background by default
 * @param waitTime the wait of {@code acquire()}
 * @param localQueueLimit how many local callers may wait for one name
 * @param namespace the namespace of every name
 * @param operationTimeout the longest one store operation may take
 * @param listener receives metrics events
 * @param handoffPasses how many times in a row a hold may pass between threads of this client without
 *     the store (cohort hand-off); 0 turns hand-off off
 * @param handoffTime how long a chain of passes may last from its store grant; zero turns hand-off off
 */
public record EngineOptions(
        long leaseMillis,
        boolean renewal,
        Duration waitTime,
        int localQueueLimit,
        String namespace,
        Duration operationTimeout,
        LockListener listener,
        int handoffPasses,
        Duration handoffTime) {
    /** The defaults: 30 s leases with renewal, 30 s wait, no queue limit, 5 s timeout, 32 passes in 50 ms. */
    public static final EngineOptions DEFAULTS = new EngineOptions(
            30_000,
            true,
            Duration.ofSeconds(30),
            Integer.MAX_VALUE,
            "dlock",
            Duration.ofSeconds(5),
            ListenerEvents.NONE,
            32,
            Duration.ofMillis(50));
}
