package dev.dlock;

import dev.dlock.internal.Engine;
import dev.dlock.internal.EngineOptions;
import dev.dlock.internal.base.Checks;
import dev.dlock.spi.LockBackend;
import dev.dlock.spi.LockBackendFactory;
import dev.dlock.spi.LockBackendProvider;
import java.time.Duration;
import java.util.Collection;
import java.util.List;
import java.util.Objects;

/**
 * The entry point: one connection to a lock store, from which locks, read-write locks, semaphores and
 * multi-locks are made.
 *
 * <h2>Connecting</h2>
 *
 * <p>{@link #connect(String)} picks the backend by URI scheme among those on the class path: {@code
 * mem:} (in this jar, for tests and single-process apps), {@code redis://}, {@code zookeeper://}, {@code
 * jdbc:postgresql://} and so on from the backend modules. {@link #builder(String)} sets options first;
 * {@link #builder(LockBackendFactory)} reuses a client object the application already has, through a
 * backend module's factory ({@code RedisBackends.of(redisClient)}, {@code JdbcBackends.of(dataSource)},
 * ...). Here with the in-memory store; any other URI works the same:
 *
 * <!-- example: lockclient-basic (LockClientExamplesTest; a test checks that both are the same) -->
 * <pre>{@code
 * try (LockClient client = LockClient.builder("mem:")
 *         .leaseTime(Duration.ofSeconds(30))
 *         .namespace("billing")
 *         .build()) {
 *     DistributedLock lock = client.lock("invoice:2026-11");
 *     try (Lease lease = lock.acquire(Duration.ofSeconds(10))) {
 *         issueInvoices(lease.fencingToken());
 *     }
 * }
 * }</pre>
 *
 * <p>A caller that should not wait asks once; another holder makes the answer empty:
 *
 * <!-- example: lockclient-try (LockClientExamplesTest) -->
 * <pre>{@code
 * Optional<Lease> maybe = client.lock("nightly-export").tryAcquire();
 * if (maybe.isEmpty()) {
 *     return; // another process is exporting
 * }
 * try (Lease lease = maybe.get()) {
 *     export(lease.fencingToken());
 * }
 * }</pre>
 *
 * <h2>Leases and renewal</h2>
 *
 * <p>Every grant is a lease with a lease time (default 30 seconds) kept by the store's clock. While held,
 * one scheduler thread per client renews all of the client's leases together, about every third of the
 * lease time, in one round trip per store node. If renewal fails until the lease's local deadline, the
 * lease is lost and its holder told (see {@link Lease}). {@link Builder#renewal(boolean)} switches this
 * off, so that leases simply run out.
 *
 * <h2>Waiting</h2>
 *
 * <p>Waiters are woken by the store when the lock is released, not by polling. Threads of one client
 * that wait for the same name queue locally and only the first of them asks the store; {@link
 * Builder#localQueueLimit(int)} caps that queue and turns further callers away with {@link
 * LockRejectedException}.
 *
 * <h2>Failures</h2>
 *
 * <p>Every store operation has a timeout (default 5 seconds); a store that is down or slow makes calls
 * fail with {@link LockBackendException} within it. Nothing is ever granted without the store's
 * agreement.
 *
 * <h2>Closing</h2>
 *
 * <p>{@link #close()} releases every lease this client holds, fails its pending waits, stops its threads
 * and closes its connections. A client is safe for use by many threads.
 */
public final class LockClient implements AutoCloseable {
    private final Engine engine;

    private LockClient(Engine engine) {
        this.engine = engine;
    }

    /**
     * Connects with default options.
     *
     * @param uri a backend URI, for example {@code mem:} or {@code redis://localhost:6379}
     * @return a connected client
     * @throws IllegalArgumentException if no backend on the class path accepts the URI
     * @throws LockBackendException if the store cannot be reached
     */
    public static LockClient connect(String uri) {
        return builder(uri).build();
    }

    /**
     * Starts a builder for a backend chosen by URI.
     *
     * @param uri a backend URI
     * @return a builder
     */
    public static Builder builder(String uri) {
        Objects.requireNonNull(uri, "uri must not be null");
        return new Builder(uri, null);
    }

    /**
     * Starts a builder for a backend opened by a factory, such as one wrapping an existing Lettuce client
     * or {@code DataSource}.
     *
     * @param backend the factory
     * @return a builder
     */
    public static Builder builder(LockBackendFactory backend) {
        Objects.requireNonNull(backend, "backend must not be null");
        return new Builder(null, backend);
    }

    /**
     * A reentrant, non-fair exclusive lock.
     *
     * @param name any non-empty string of at most 1,024 UTF-8 bytes
     * @return a view of the lock
     * @throws IllegalArgumentException for a bad name
     */
    public DistributedLock lock(String name) {
        return engine.lock(name);
    }

    /**
     * A reentrant exclusive lock that serves waiters first come, first served across clients. A separate
     * lock from {@link #lock(String)} of the same name.
     *
     * @param name the lock name
     * @return a view of the lock
     */
    public DistributedLock fairLock(String name) {
        return engine.fairLock(name);
    }

    /**
     * A read-write lock.
     *
     * @param name the lock name
     * @return the pair of views
     */
    public DistributedReadWriteLock readWriteLock(String name) {
        return engine.readWriteLock(name);
    }

    /**
     * A counting semaphore with per-permit leases.
     *
     * @param name the semaphore name
     * @param permits how many holders it admits, at least 1
     * @return a view of the semaphore
     * @throws IllegalArgumentException for a bad name or fewer than one permit
     */
    public DistributedSemaphore semaphore(String name, int permits) {
        return engine.semaphore(name, permits);
    }

    /**
     * One lock over several names, taken all or nothing within one wait. Names are deduplicated and taken
     * in sorted order, so two multi-locks over overlapping names cannot deadlock. The lease's {@link
     * Lease#parts()} carry one fencing token per name.
     *
     * @param names one or more lock names
     * @return a view of the multi-lock
     */
    public DistributedLock multiLock(String... names) {
        Objects.requireNonNull(names, "names must not be null");
        return engine.multiLock(List.of(names));
    }

    /**
     * One lock over several names; see {@link #multiLock(String...)}.
     *
     * @param names one or more lock names
     * @return a view of the multi-lock
     */
    public DistributedLock multiLock(Collection<String> names) {
        Objects.requireNonNull(names, "names must not be null");
        return engine.multiLock(List.copyOf(names));
    }

    /**
     * A candidate in the election of a leader among the clients of this store: the leader is the holder of
     * the exclusive lock {@code name}, a term is a lease of it. It does nothing until {@link
     * LeaderElection#join()}.
     *
     * @param name the election's name, a lock name (the same name's {@link #lock(String)} is the same lock)
     * @return a new candidate
     * @throws IllegalArgumentException for a bad name
     */
    public LeaderElection election(String name) {
        return election(name, new LeaderElection.Listener() {});
    }

    /**
     * A candidate in an election; see {@link #election(String)}.
     *
     * @param name the election's name
     * @param listener told when this candidate is elected and when its term ends
     * @return a new candidate
     * @throws IllegalArgumentException for a bad name
     * @throws NullPointerException if the listener is null
     */
    public LeaderElection election(String name, LeaderElection.Listener listener) {
        return new Campaign(engine.lock(name), listener);
    }

    /**
     * The leases this client holds now, through either API.
     *
     * @return a snapshot
     */
    public List<Lease> heldLeases() {
        return engine.heldLeases();
    }

    /**
     * Asks the store who holds a name, in each kind of lock that has holders or waiters, or whose grants the
     * store holds back after it may have lost state ({@link LockInfo#heldBack()}).
     *
     * @param name the lock name
     * @return one entry per such kind, empty when nobody holds or waits for the name and nothing is held back
     * @throws IllegalArgumentException for a bad name
     * @throws LockBackendException if the store failed
     */
    public List<LockInfo> describe(String name) {
        return engine.describe(name);
    }

    /**
     * Lists held locks of this client's namespace whose names start with a prefix.
     *
     * @param prefix a name prefix, possibly empty
     * @return held locks, sorted by name
     * @throws LockBackendException if the store failed
     */
    public List<LockInfo> list(String prefix) {
        return engine.list(prefix);
    }

    /**
     * Asks how long the store holds back grants in this client's namespace because it may have lost
     * grants whose leases are still running (after a restart without persistence, or a failover to a
     * replica that missed them: docs/safety.md). Meanwhile {@code tryLock()} answers false and waiters
     * wait. Stores that never lose a committed grant always answer zero.
     *
     * @return the time left, zero when grants are not held back
     * @throws UnsupportedOperationException on a Redis Cluster, whose hold-back is per hash slot ({@link
     *     #describe} tells it per lock)
     * @throws LockBackendException if the store failed
     */
    public Duration heldBack() {
        return engine.heldBack();
    }

    /**
     * Administrative: removes every hold of a name in every kind, whoever holds it. The holders find out
     * at their next renewal. Fencing tokens keep increasing.
     *
     * @param name the lock name
     * @return true if anything was removed
     * @throws IllegalArgumentException for a bad name
     * @throws LockBackendException if the store failed
     */
    public boolean forceRelease(String name) {
        return engine.forceRelease(name);
    }

    /** Releases every lease of this client, fails its pending waits, stops its threads, disconnects. */
    @Override
    public void close() {
        engine.close();
    }

    @Override
    public String toString() {
        return "LockClient[" + engine + "]";
    }

    /**
     * Options for a {@link LockClient}. Every setter validates at once (a duration is converted there, once);
     * {@link #build()} hands the engine an immutable snapshot of them.
     */
    public static final class Builder {
        private final String uri;
        private LockBackendFactory factory;
        private long leaseMillis = EngineOptions.DEFAULTS.leaseMillis();
        private boolean renewal = EngineOptions.DEFAULTS.renewal();
        private Duration waitTime = EngineOptions.DEFAULTS.waitTime();
        private int localQueueLimit = EngineOptions.DEFAULTS.localQueueLimit();
        private String namespace = EngineOptions.DEFAULTS.namespace();
        private Duration operationTimeout = EngineOptions.DEFAULTS.operationTimeout();
        private LockListener listener = EngineOptions.DEFAULTS.listener();
        private int handoffPasses = EngineOptions.DEFAULTS.handoffPasses();
        private Duration handoffTime = EngineOptions.DEFAULTS.handoffTime();

        private Builder(String uri, LockBackendFactory factory) {
            this.uri = uri;
            this.factory = factory;
        }

        /**
         * How long the store keeps a grant without renewal. Default 30 seconds.
         *
         * @param leaseTime at least 10 ms, at most 365 days
         * @return this builder
         */
        public Builder leaseTime(Duration leaseTime) {
            leaseMillis = Checks.leaseMillis(leaseTime);
            return this;
        }

        /**
         * Whether held leases are renewed in the background. Default true.
         *
         * @param renew false to let leases run out after their lease time
         * @return this builder
         */
        public Builder renewal(boolean renew) {
            renewal = renew;
            return this;
        }

        /**
         * The wait of {@link DistributedLock#acquire()}. Default 30 seconds.
         *
         * @param waitTime zero or positive
         * @return this builder
         */
        public Builder waitTime(Duration waitTime) {
            this.waitTime = Checks.nonNegative(waitTime, "waitTime");
            return this;
        }

        /**
         * How many callers of this client may wait for one name at once; more are rejected with {@link
         * LockRejectedException}. Default unlimited.
         *
         * @param limit at least 1
         * @return this builder
         */
        public Builder localQueueLimit(int limit) {
            localQueueLimit = Checks.localQueueLimit(limit);
            return this;
        }

        /**
         * Separates applications sharing one store. Default {@code dlock}.
         *
         * @param namespace 1 to 64 characters of letters, digits, {@code _}, {@code .} and {@code -}
         * @return this builder
         */
        public Builder namespace(String namespace) {
            this.namespace = Checks.namespace(namespace);
            return this;
        }

        /**
         * The longest one store operation may take before it fails with {@link LockBackendException}.
         * Default 5 seconds.
         *
         * @param timeout positive, at most a day
         * @return this builder
         */
        public Builder operationTimeout(Duration timeout) {
            operationTimeout = Checks.operationTimeout(timeout);
            return this;
        }

        /**
         * Bounds the cohort hand-off: when a thread of this client releases an exclusive or write lock
         * that other threads of this client wait for, the hold passes to the first of them without a
         * store round trip, at most {@code maxPasses} times in a row and for at most {@code maxTime}
         * after the store granted it; then it goes back to the store, so other clients get their turn.
         * Every holder gets its own {@link Lease} with a fencing token greater than the previous
         * holder's and smaller than any later grant by the store. Fair locks, read locks and semaphores
         * never pass; neither does a store that reserves no room between its tokens ({@link
         * LockBackend#tokenBlock()}). Default 32 passes, 50 ms.
         *
         * @param maxPasses zero or positive; 0 turns hand-off off
         * @param maxTime zero or positive; zero turns hand-off off
         * @return this builder
         */
        public Builder localHandoff(int maxPasses, Duration maxTime) {
            handoffPasses = Checks.handoffPasses(maxPasses);
            handoffTime = Checks.nonNegative(maxTime, "localHandoff maxTime");
            return this;
        }

        /**
         * Receives metrics events.
         *
         * @param listener the listener
         * @return this builder
         */
        public Builder listener(LockListener listener) {
            this.listener = Checks.notNull(listener, "listener");
            return this;
        }

        /**
         * The factory that opens this client's store: the one given to {@link
         * LockClient#builder(LockBackendFactory)}, or the one of the backend that accepts the URI given
         * to {@link LockClient#builder(String)} ({@link LockBackendProvider#factoryFor(String)}).
         * Decorate it with {@link LockBackendFactory#andThen} and set it back with {@link
         * #backend(LockBackendFactory)} to instrument a client whose builder was made elsewhere (a test
         * kit, a Spring customizer).
         *
         * @return the factory {@link #build()} opens
         * @throws IllegalArgumentException if no backend accepts the URI
         */
        public LockBackendFactory backend() {
            if (factory == null) {
                factory = LockBackendProvider.factoryFor(uri);
            }
            return factory;
        }

        /**
         * Opens the store with another factory, usually this builder's own {@link #backend()} decorated.
         *
         * @param backend the factory {@link #build()} opens
         * @return this builder
         */
        public Builder backend(LockBackendFactory backend) {
            factory = Checks.notNull(backend, "backend");
            return this;
        }

        /**
         * Connects.
         *
         * @return a connected client
         * @throws IllegalArgumentException if no backend accepts the URI
         * @throws LockBackendException if the store cannot be reached
         */
        public LockClient build() {
            EngineOptions options = new EngineOptions(
                    leaseMillis,
                    renewal,
                    waitTime,
                    localQueueLimit,
                    namespace,
                    operationTimeout,
                    listener,
                    handoffPasses,
                    handoffTime);
            return new LockClient(Engine.open(uri, backend(), options));
        }
    }
}
