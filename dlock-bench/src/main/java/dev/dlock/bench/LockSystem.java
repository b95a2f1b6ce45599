package dev.dlock.bench;

/**
 * One lock implementation under test on one kind of store, for example Redisson's {@code RLock} on Redis
 * or dlock on PostgreSQL.
 *
 * <p>A system opens {@link Client}s; a client stands for one application instance with its own
 * connections. The harness opens as many clients as a scenario asks for, and calls {@link Client#lock}
 * once per thread and name.
 */
interface LockSystem {
    /** The library, e.g. {@code dlock}, {@code redisson-lock}, {@code curator}, {@code raw}. */
    String name();

    /** The store it runs on: {@code redis}, {@code zookeeper}, {@code postgresql}, {@code mariadb}, {@code mem}. */
    String backend();

    /** {@code name@backend}, unique among systems. */
    default String id() {
        return name() + "@" + backend();
    }

    /** Whether this system takes part in a scenario (the raw floors cannot exclude, so not in contended ones). */
    default boolean supports(Scenario scenario) {
        return true;
    }

    /**
     * Why this system cannot run here (its module is not on the class path, its store does not answer),
     * or null when it can. Called once before a run; may prepare the store (e.g. create a table).
     */
    String unavailableReason(Endpoints endpoints);

    /**
     * Opens one client instance.
     *
     * @param endpoints where the stores are (possibly through a counting proxy)
     * @param threads how many threads will use the client at once, to size connection pools
     * @param renewal whether held locks must be renewed in the background (the held scenario); systems
     *     that renew by default do so either way
     */
    Client open(Endpoints endpoints, int threads, boolean renewal) throws Exception;

    /** One application instance: its own connections, used by several threads. */
    interface Client extends AutoCloseable {
        /** A handle on one lock name, shared by the threads of this client that use that name. */
        BenchLock lock(String name) throws Exception;

        /** Releases everything and closes the connections. */
        @Override
        void close() throws Exception;
    }

    /** The operations the loops need, with {@link java.util.concurrent.locks.Lock} semantics. */
    interface BenchLock {
        /** Waits until held by the calling thread. */
        void lock() throws Exception;

        /** Releases the calling thread's hold. */
        void unlock() throws Exception;

        /** Takes the lock if it is free now; true when taken. */
        boolean tryLock() throws Exception;

        /** Adapts a {@link java.util.concurrent.locks.Lock} (dlock, Redisson and Spring locks all are one). */
        static BenchLock of(java.util.concurrent.locks.Lock lock) {
            return new BenchLock() {
                @Override
                public void lock() {
                    lock.lock();
                }

                @Override
                public void unlock() {
                    lock.unlock();
                }

                @Override
                public boolean tryLock() {
                    return lock.tryLock();
                }
            };
        }
    }
}
