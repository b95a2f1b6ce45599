package dev.dlock.spi;

/**
 * Receives the store's signal that a resource may have become available.
 *
 * <p>Called from a backend thread; implementations (the engine's) return at once and never block.
 */
@FunctionalInterface
public interface WakeListener {
    /**
     * A holder released the resource or a queued entry left.
     *
     * @param nextOwner for a fair lock, the owner id now first in line (only that waiter need wake);
     *     null when any waiter may try
     */
    void wake(String nextOwner);
}
