package dev.dlock.internal;

import dev.dlock.DistributedLock;
import dev.dlock.DistributedReadWriteLock;
import dev.dlock.DistributedSemaphore;
import dev.dlock.Lease;
import dev.dlock.LockException;
import dev.dlock.LockInfo;
import dev.dlock.spi.BackendContext;
import dev.dlock.spi.LockBackendFactory;
import dev.dlock.spi.LockKey;
import dev.dlock.spi.Mode;
import java.time.Duration;
import java.util.ArrayList;
import java.util.Comparator;
import java.util.List;
import java.util.concurrent.ThreadLocalRandom;

/**
 * The engine behind one {@code LockClient}: everything that is not specific to a store. This class only
 * wires the parts together, makes the lock views and closes; each concern lives in its own class.
 *
 * <p>Design: a backend only answers single non-blocking attempts ({@link Store} makes each a timed call).
 * The engine turns them into waits ({@link Acquisition}), queues callers of one client locally so that
 * only the first of them talks to the store ({@link LocalQueues}) and passes a released hold to the next
 * of them ({@link Cohort}), shares one wake-up subscription per resource ({@link Subscriptions}), keeps
 * thread-owned reentrant holds for the {@code Lock} view ({@link Holds}), renews every lease from one
 * scheduler thread in batches ({@link Watchdog}) and tells the listener off its own threads ({@link
 * ListenerEvents}). Acquisitions and leases reach their collaborators through {@link Parts}, never
 * through the engine.
 *
 * <p>Concurrency: there is exactly one thread of our own per client, the scheduler; it runs timers and
 * renewal ticks and never blocks. Store answers arrive on the backend's threads and are handled there
 * without blocking. User-visible futures of the async API complete on the common pool so that user code
 * never runs on a store or scheduler thread ({@link Waits}). No monitor is held across a blocking call.
 *
 * <p>Failure modes: every store call is bounded by the operation timeout; a grant that arrives after its
 * caller gave up is released at once; a lease whose renewals fail until its local deadline is declared
 * lost even if the store is unreachable.
 *
 * <p>Not part of the public API: public only so that {@code LockClient} can reach it.
 */
public final class Engine implements AutoCloseable {
    private static final Mode[] KINDS = {Mode.EXCLUSIVE, Mode.FAIR, Mode.WRITE, Mode.PERMIT};

    final EngineOptions options;
    final Store store;
    final Holds holds = new Holds();
    final LocalQueues queues;
    private final ListenerEvents events;
    private final Watchdog watchdog;
    private final Parts parts;
    private final String label = processLabel();

    private Engine(String uri, LockBackendFactory factory, EngineOptions options) {
        this.options = options;
        this.events = new ListenerEvents(options.listener());
        this.store = new Store(options.operationTimeout());
        this.watchdog = new Watchdog(store, events, holds);
        try {
            store.open(factory, new BackendContext(uri, options.operationTimeout(), watchdog));
        } catch (RuntimeException e) {
            events.close(0);
            throw e;
        }
        this.queues = new LocalQueues(options.localQueueLimit(), events, store);
        Cohort cohort = new Cohort(store, queues, options.handoffPasses(), options.handoffTime());
        this.parts = new Parts(store, events, queues, watchdog, cohort);
    }

    /**
     * Opens a client engine.
     *
     * @param uri the backend URI, or null when the client was built from a factory
     * @param factory opens the backend
     * @param options validated options
     * @return a running engine
     */
    public static Engine open(String uri, LockBackendFactory factory, EngineOptions options) {
        return new Engine(uri, factory, options);
    }

    private static String processLabel() {
        String host = System.getenv("HOSTNAME");
        if (host == null || host.isBlank()) {
            try {
                host = java.net.InetAddress.getLocalHost().getHostName();
            } catch (java.io.IOException e) {
                host = "localhost";
            }
        }
        String label = ProcessHandle.current().pid() + "@" + host.replaceAll("[^A-Za-z0-9._-]", "_");
        return label.length() > 60 ? label.substring(0, 60) : label;
    }

    /** A new owner id: {@code pid@host#<128 random bits>}. */
    private String newOwner() {
        ThreadLocalRandom r = ThreadLocalRandom.current();
        return label + "#" + Long.toHexString(r.nextLong() | Long.MIN_VALUE)
                + Long.toHexString(r.nextLong() | Long.MIN_VALUE);
    }

    private LockKey key(String name, Mode mode) {
        return new LockKey(options.namespace(), Checks.name(name), mode);
    }

    /** The terms of a lock view with the client's lease time and renewal. */
    private Terms terms(LockKey key) {
        return new Terms(key, options.leaseTime().toMillis(), options.renewal(), 1);
    }

    // ---- the views LockClient hands out

    /**
     * A non-fair exclusive lock.
     *
     * @param name validated here
     * @return the lock view
     */
    public DistributedLock lock(String name) {
        return new LockHandle(this, terms(key(name, Mode.EXCLUSIVE)));
    }

    /**
     * A fair exclusive lock.
     *
     * @param name validated here
     * @return the lock view
     */
    public DistributedLock fairLock(String name) {
        return new LockHandle(this, terms(offered(key(name, Mode.FAIR), "fair locks")));
    }

    /**
     * A read-write lock.
     *
     * @param name validated here
     * @return the pair
     */
    public DistributedReadWriteLock readWriteLock(String name) {
        LockKey read = offered(key(name, Mode.READ), "read-write locks");
        return new ReadWriteHandle(
                new LockHandle(this, terms(read)), new LockHandle(this, terms(read.withMode(Mode.WRITE))));
    }

    /**
     * A semaphore.
     *
     * @param name validated here
     * @param permits at least 1
     * @return the semaphore view
     */
    public DistributedSemaphore semaphore(String name, int permits) {
        int checked = Checks.permits(permits);
        LockKey key = offered(key(name, Mode.PERMIT), "semaphores");
        return new SemaphoreHandle(this, new Terms(key, options.leaseTime().toMillis(), options.renewal(), checked));
    }

    private LockKey offered(LockKey key, String what) {
        if (!store.supports(key.mode())) {
            throw new UnsupportedOperationException(what + " are not offered by this store: " + store);
        }
        return key;
    }

    /**
     * A multi-lock.
     *
     * @param names at least one name
     * @return the lock view
     */
    public DistributedLock multiLock(List<String> names) {
        if (names.isEmpty()) {
            throw new IllegalArgumentException("a multi-lock needs at least one name");
        }
        List<LockKey> keys = names.stream()
                .map(n -> key(n, Mode.EXCLUSIVE))
                .distinct()
                .sorted(Comparator.comparing(LockKey::name))
                .toList();
        return new MultiLockHandle(this, keys, options.leaseTime(), options.renewal());
    }

    /**
     * The leases held now.
     *
     * @return a snapshot
     */
    public List<Lease> heldLeases() {
        return watchdog.held();
    }

    /**
     * Describes a name in every kind.
     *
     * @param name validated here
     * @return held kinds
     */
    public List<LockInfo> describe(String name) {
        Checks.name(name); // here, not inside the store call, where it would become a store failure
        List<LockInfo> result = new ArrayList<>();
        for (Mode mode : KINDS) {
            LockInfo info = Waits.join(store.describe(key(name, mode)));
            if (!info.holders().isEmpty() || info.waiters() > 0) {
                result.add(info);
            }
        }
        return result;
    }

    /**
     * Lists held names.
     *
     * @param prefix a name prefix
     * @return held resources sorted by name
     */
    public List<LockInfo> list(String prefix) {
        if (prefix == null) {
            throw new IllegalArgumentException("prefix must not be null");
        }
        List<LockInfo> all = new ArrayList<>(Waits.join(store.list(options.namespace(), prefix)));
        all.sort(Comparator.comparing(LockInfo::name)
                .thenComparing(info -> info.kind().tag()));
        return all;
    }

    /**
     * Removes every hold of a name.
     *
     * @param name validated here
     * @return whether anything was removed
     */
    public boolean forceRelease(String name) {
        Checks.name(name);
        boolean any = false;
        for (Mode mode : KINDS) {
            any |= Waits.join(store.forceRelease(key(name, mode)));
        }
        return any;
    }

    /**
     * Starts an acquisition on a view's terms; its result completes with the lease or the failure.
     *
     * @param downgradeFrom the owner of this thread's write hold when it takes the read lock, else null
     */
    Acquisition start(Terms terms, Duration wait, String downgradeFrom) {
        Checks.nonNegative(wait, "wait");
        if (store.isClosed()) {
            throw new LockException("the LockClient is closed");
        }
        Acquisition acquisition = new Acquisition(parts, terms, newOwner(), Checks.saturatedNanos(wait), downgradeFrom);
        queues.enqueue(acquisition);
        return acquisition;
    }

    /**
     * Releases every lease and fails waits (each bounded by the operation timeout), lets calls on their
     * way settle, stops the scheduler, closes the backend.
     */
    @Override
    public void close() {
        if (!store.startClosing()) {
            return;
        }
        queues.failAll(new LockException("the LockClient was closed while waiting"));
        for (Lease lease : watchdog.held()) {
            ((LeaseImpl) lease).releaseAsync();
        }
        // Best effort: what could not be released in time expires by its lease time.
        store.awaitAnswers();
        queues.closeSubscriptions();
        try {
            store.close();
        } finally {
            events.close(options.operationTimeout().toNanos());
        }
    }

    @Override
    public String toString() {
        return "namespace=" + options.namespace() + ", backend=" + store.backendType()
                + (store.isClosed() ? ", closed" : "");
    }
}
