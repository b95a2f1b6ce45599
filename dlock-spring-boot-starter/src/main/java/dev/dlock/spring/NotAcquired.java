package dev.dlock.spring;

/**
 * What a {@link WithLock} method does when the lock is not had in time: the wait time ran out
 * ({@link dev.dlock.LockTimeoutException}) or the caller was turned away by the local queue limit
 * ({@link dev.dlock.LockRejectedException}). In every case the method itself is not called. A store
 * failure ({@link dev.dlock.LockBackendException}) is always thrown, whatever the policy.
 */
public enum NotAcquired {
    /** Throw the {@code LockTimeoutException} or {@code LockRejectedException}. The default. */
    THROW,
    /**
     * Return without calling the method: {@code null}, an empty {@code Optional}, a future completed with
     * {@code null}, an empty {@code Mono} or {@code Flux}. Not allowed on methods returning a primitive.
     */
    SKIP,
    /** Call the method named by {@link WithLock#fallback()} instead and return its result. */
    FALLBACK
}
