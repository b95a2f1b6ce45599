package dev.dlock.internal;

import dev.dlock.DistributedLock;
import dev.dlock.DistributedReadWriteLock;
import dev.dlock.DistributedSemaphore;
import dev.dlock.Lease;
import dev.dlock.LockBackendException;
import dev.dlock.LockException;
import dev.dlock.LockInfo;
import dev.dlock.internal.base.Checks;
import dev.dlock.internal.base.ListenerEvents;
import dev.dlock.internal.base.Timebase;
import dev.dlock.internal.base.Waits;
import dev.dlock.internal.lease.LeaseImpl;
import dev.dlock.internal.lease.Terms;
import dev.dlock.internal.lease.Watchdog;
import dev.dlock.internal.store.Store;
import dev.dlock.internal.view.Holds;
import dev.dlock.internal.view.Views;
import dev.dlock.internal.wait.Acquisitions;
import dev.dlock.spi.BackendContext;
import dev.dlock.spi.LockBackendFactory;
import dev.dlock.spi.LockKey;
import dev.dlock.spi.Mode;
import java.time.Duration;
import java.util.ArrayList;
import java.util.Comparator;
import java.util.List;

/**
 * The engine behind one {@code LockClient}: everything that is not specific to a store. This class only
 * wires the parts together, hands out the lock views and closes; each concern lives in its own package
 * below it, every reference running downwards: {@code view} (the lock views), {@code wait} (waits, local
 * queues, hand-off), {@code lease} (leases and the watchdog), {@code store} (every store call, timed),
 * {@code base} (checks, blocking callers, listener events).
 *
 * <p>Design: a backend only answers single non-blocking attempts ({@link Store} makes each a timed call).
 * The engine turns them into waits ({@code Acquisition}), queues callers of one client locally so that
 * only the first of them talks to the store ({@code LocalQueues}) and passes a released hold to the next
 * of them ({@code Cohort}), shares one wake-up subscription per resource ({@code Subscriptions}), keeps
 * thread-owned reentrant holds for the {@code Lock} view ({@link Holds}), renews every lease from one
 * scheduler thread in batches ({@link Watchdog}) and tells the listener off its own threads ({@link
 * ListenerEvents}). Where a lower part must call back up it owns a small interface: a lease ends its hold
 * through {@code HoldRoute} (the hand-off implements it).
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
 * <p>Not part of the public API: public only so that {@code LockClient} can reach it; the module does
 * not export this package.
 */
public final class Engine implements AutoCloseable {
    private static final Mode[] KINDS = {Mode.EXCLUSIVE, Mode.FAIR, Mode.WRITE, Mode.PERMIT};

    private final EngineOptions options;
    final Store store;
    private final ListenerEvents events;
    private final Watchdog watchdog;
    final Acquisitions acquisitions;
    private final Views views;

    private Engine(String uri, LockBackendFactory factory, EngineOptions options, Timebase time) {
        this.options = options;
        this.events = new ListenerEvents(options.listener());
        this.store = new Store(options.operationTimeout(), time);
        Holds holds = new Holds();
        this.watchdog = new Watchdog(store, events);
        try {
            store.open(factory, new BackendContext(uri, options.operationTimeout(), watchdog));
        } catch (RuntimeException e) {
            events.close(0);
            throw e;
        }
        this.acquisitions = new Acquisitions(
                store, events, watchdog, options.localQueueLimit(), options.handoffPasses(), options.handoffTime());
        this.views = new Views(acquisitions, holds, options.waitTime());
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
        return new Engine(uri, factory, options, Timebase.SYSTEM);
    }

    /**
     * Opens an engine on a time of the caller's: for the model checker of this package, which moves the
     * clock and runs the timers itself ({@code HandOffModelCheckTest}).
     */
    static Engine open(LockBackendFactory factory, EngineOptions options, Timebase time) {
        return new Engine(null, factory, options, time);
    }

    private LockKey key(String name, Mode mode) {
        return new LockKey(options.namespace(), Checks.name(name), mode);
    }

    /** The terms of a lock view with the client's lease time and renewal. */
    private Terms terms(LockKey key, int permits) {
        return new Terms(key, options.leaseMillis(), options.renewal(), permits);
    }

    // ---- the views LockClient hands out

    /**
     * A non-fair exclusive lock.
     *
     * @param name validated here
     * @return the lock view
     */
    public DistributedLock lock(String name) {
        return views.lock(terms(key(name, Mode.EXCLUSIVE), 1));
    }

    /**
     * A fair exclusive lock.
     *
     * @param name validated here
     * @return the lock view
     */
    public DistributedLock fairLock(String name) {
        return views.lock(terms(offered(key(name, Mode.FAIR), "fair locks"), 1));
    }

    /**
     * A read-write lock.
     *
     * @param name validated here
     * @return the pair
     */
    public DistributedReadWriteLock readWriteLock(String name) {
        LockKey read = offered(key(name, Mode.READ), "read-write locks");
        return views.readWriteLock(terms(read, 1), terms(read.withMode(Mode.WRITE), 1));
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
        return views.semaphore(terms(key, checked));
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
        return views.multiLock(keys, options.leaseMillis(), options.renewal());
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
     * @return the kinds that are held, waited for, or whose grants the store holds back
     */
    public List<LockInfo> describe(String name) {
        Checks.name(name); // here, not inside the store call, where it would become a store failure
        List<LockInfo> result = new ArrayList<>();
        for (Mode mode : KINDS) {
            LockInfo info = Waits.join(store.describe(key(name, mode)));
            if (!info.holders().isEmpty()
                    || info.waiters() > 0
                    || !info.heldBack().isZero()) {
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
     * Asks how long grants in the namespace are held back after the store may have lost state.
     *
     * @return the time left, zero when not held back
     * @throws UnsupportedOperationException where the store holds grants back per lock, not per namespace
     */
    public Duration heldBack() {
        try {
            return Waits.join(store.heldBack(options.namespace()));
        } catch (LockBackendException e) {
            if (e.getCause() instanceof UnsupportedOperationException refused) {
                throw new UnsupportedOperationException(refused.getMessage(), e); // a refusal, not a failure
            }
            throw e;
        }
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
     * Releases every lease and fails waits (each bounded by the operation timeout), lets calls on their
     * way settle, stops the scheduler, closes the backend.
     */
    @Override
    public void close() {
        if (!store.startClosing()) {
            return;
        }
        // A hold being passed right now is either among the held leases after this, or on its way back.
        acquisitions.awaitReleases(store.nanoTime() + options.operationTimeout().toNanos());
        acquisitions.failAll(new LockException("the LockClient was closed while waiting"));
        for (Lease lease : watchdog.held()) {
            LeaseImpl held = (LeaseImpl) lease;
            if (!watchdog.laterReleases().leaveToExpire(held)) {
                held.releaseAsync();
            }
        }
        // Best effort: what could not be released in time expires by its lease time.
        store.awaitAnswers();
        acquisitions.closeSubscriptions();
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
