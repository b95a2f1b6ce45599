package dev.dlock.spi;

import dev.dlock.LockKind;

/**
 * How an acquisition wants to hold a resource.
 *
 * <p>Each mode belongs to one {@linkplain #kind() kind} of resource. Resources of different kinds never
 * interact, even under the same name: {@code lock("a")} and {@code fairLock("a")} are two locks.
 */
public enum Mode {
    /** One holder at a time, waiters in no particular order. */
    EXCLUSIVE(LockKind.LOCK),
    /** One holder at a time, waiters served first come, first served across clients. */
    FAIR(LockKind.FAIR),
    /** Shared with other readers; excluded by a writer and by a queued writer. */
    READ(LockKind.READ_WRITE),
    /** Excludes readers and other writers. */
    WRITE(LockKind.READ_WRITE),
    /** One of at most {@link AcquireRequest#permits()} holders. */
    PERMIT(LockKind.SEMAPHORE);

    private final LockKind kind;

    Mode(LockKind kind) {
        this.kind = kind;
    }

    /**
     * The kind of resource this mode acts on. A backend keeps one record per (namespace, kind, name), named
     * in keys and paths by the kind's {@link LockKind#tag() tag}; {@link #READ} and {@link #WRITE} share it.
     *
     * @return the kind
     */
    public LockKind kind() {
        return kind;
    }

    /**
     * Whether a caller waiting in this mode keeps an entry in the store's queue while it waits: {@link
     * #FAIR} waiters, to be served in order, and {@link #WRITE} waiters, to keep new readers out. The entry
     * lives {@link AcquireRequest#queueMillis()} unless refreshed and is removed by {@link
     * LockBackend#cancelWait}.
     *
     * @return {@code true} for {@link #FAIR} and {@link #WRITE}
     */
    public boolean queuesWhileWaiting() {
        return this == FAIR || this == WRITE;
    }
}
