package dev.dlock.internal;

import dev.dlock.DistributedLock;
import dev.dlock.DistributedReadWriteLock;
import dev.dlock.DistributedSemaphore;
import dev.dlock.Lease;
import dev.dlock.LockBackendException;
import dev.dlock.LockException;
import dev.dlock.LockInfo;
import dev.dlock.spi.BackendContext;
import dev.dlock.spi.LockBackend;
import dev.dlock.spi.LockBackendFactory;
import dev.dlock.spi.LockBackendProvider;
import dev.dlock.spi.LockKey;
import dev.dlock.spi.Mode;
import java.time.Duration;
import java.util.ArrayList;
import java.util.Comparator;
import java.util.LinkedHashSet;
import java.util.List;
import java.util.ServiceLoader;
import java.util.Set;
import java.util.concurrent.CancellationException;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.CompletionException;
import java.util.concurrent.CompletionStage;
import java.util.concurrent.ConcurrentHashMap;
import java.util.concurrent.ExecutionException;
import java.util.concurrent.RejectedExecutionException;
import java.util.concurrent.ScheduledFuture;
import java.util.concurrent.ScheduledThreadPoolExecutor;
import java.util.concurrent.ThreadLocalRandom;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.atomic.AtomicInteger;
import java.util.function.Supplier;

/**
 * The engine behind one {@code LockClient}: everything that is not specific to a store.
 *
 * <p>Design: a backend only answers single non-blocking attempts ({@link LockBackend}). The engine turns
 * them into waits ({@link Acquisition}), queues callers of one client locally so that only the first of
 * them talks to the store ({@link LocalQueue}) and passes a released hold to the next of them ({@link
 * Cohort}), shares one wake-up subscription per resource ({@link
 * Subscriptions}), keeps thread-owned reentrant holds for the {@code Lock} view ({@link Holds}), and
 * renews every lease from one scheduler thread in batches ({@link Watchdog}).
 *
 * <p>Concurrency: there is exactly one thread of our own per client, the scheduler; it runs timers and
 * renewal ticks and never blocks. Store answers arrive on the backend's threads and are handled there
 * without blocking. User-visible futures of the async API complete on the common pool so that user code
 * never runs on a store or scheduler thread. No monitor is held across a blocking call.
 *
 * <p>Failure modes: every store call is bounded by the operation timeout ({@link #call}); a grant that
 * arrives after its caller gave up is released at once; a lease whose renewals fail until its local
 * deadline is declared lost even if the store is unreachable.
 *
 * <p>Not part of the public API.
 */
public final class Engine implements AutoCloseable {
    private static final AtomicInteger CLIENTS = new AtomicInteger();

    final EngineOptions options;
    final LockBackend backend;
    final ScheduledThreadPoolExecutor scheduler;
    final Watchdog watchdog;
    final Subscriptions subscriptions;
    final Holds holds = new Holds();
    final StoreCalls calls;
    final ListenerEvents events;
    final Cohort cohort;
    final ConcurrentHashMap<LockKey, LocalQueue> queues = new ConcurrentHashMap<>();
    private final String label;
    private final long timeoutNanos;

    private volatile boolean closed;

    private Engine(EngineOptions options, LockBackendFactory factory, String uri) {
        this.options = options;
        this.timeoutNanos = options.operationTimeout().toNanos();
        this.label = processLabel();
        this.events = new ListenerEvents(options.listener(), options.listener() == EngineOptions.NO_LISTENER);
        int id = CLIENTS.incrementAndGet();
        this.scheduler = new ScheduledThreadPoolExecutor(1, r -> {
            Thread t = new Thread(r, "dlock-scheduler-" + id);
            t.setDaemon(true);
            return t;
        });
        scheduler.setRemoveOnCancelPolicy(true);
        scheduler.setExecuteExistingDelayedTasksAfterShutdownPolicy(false);
        this.calls = new StoreCalls(scheduler, options.operationTimeout());
        this.watchdog = new Watchdog(this);
        this.subscriptions = new Subscriptions(this);
        LockBackend opened;
        try {
            opened = factory.open(new BackendContext(uri, options.operationTimeout(), watchdog));
        } catch (RuntimeException e) {
            scheduler.shutdownNow();
            events.close(0);
            throw e instanceof LockException || e instanceof IllegalArgumentException
                    ? e
                    : new LockBackendException("could not open the store: " + e, e);
        }
        this.backend = opened;
        this.cohort = new Cohort(this);
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
        return new Engine(options, factory, uri);
    }

    /**
     * Finds the backend for a URI among the {@link LockBackendProvider}s on the class path.
     *
     * @param uri a backend URI
     * @return the provider's factory
     * @throws IllegalArgumentException if no provider accepts the URI
     */
    public static LockBackendFactory providerFor(String uri) {
        Set<String> seen = new LinkedHashSet<>(); // the two loaders are often one: list each backend once
        for (ClassLoader loader :
                new ClassLoader[] {Thread.currentThread().getContextClassLoader(), Engine.class.getClassLoader()}) {
            if (loader == null) {
                continue;
            }
            for (LockBackendProvider provider : ServiceLoader.load(LockBackendProvider.class, loader)) {
                if (provider.accepts(uri)) {
                    return provider.factory(uri);
                }
                seen.add(provider.getClass().getSimpleName());
            }
        }
        // Only the scheme is quoted: the rest of the URI may hold a password.
        int colon = uri.indexOf(':');
        String scheme = colon < 0 ? uri.substring(0, Math.min(uri.length(), 20)) : uri.substring(0, colon + 1);
        throw new IllegalArgumentException("no dlock backend on the class path accepts URIs of scheme '" + scheme
                + "' (backends found: " + seen + "); add the module for its scheme, e.g. dlock-redis for redis://");
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
    String newOwner() {
        ThreadLocalRandom r = ThreadLocalRandom.current();
        return label + "#" + Long.toHexString(r.nextLong() | Long.MIN_VALUE)
                + Long.toHexString(r.nextLong() | Long.MIN_VALUE);
    }

    LockKey key(String name, Mode mode) {
        return new LockKey(options.namespace(), Checks.name(name), mode);
    }

    // ---- the handles LockClient hands out

    /**
     * A non-fair exclusive lock.
     *
     * @param name validated here
     * @return the lock view
     */
    public DistributedLock lock(String name) {
        return new LockHandle(this, key(name, Mode.EXCLUSIVE), options.leaseTime(), options.renewal());
    }

    /**
     * A fair exclusive lock.
     *
     * @param name validated here
     * @return the lock view
     */
    public DistributedLock fairLock(String name) {
        return new LockHandle(
                this, offered(key(name, Mode.FAIR), "fair locks"), options.leaseTime(), options.renewal());
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
                new LockHandle(this, read, options.leaseTime(), options.renewal()),
                new LockHandle(this, read.withMode(Mode.WRITE), options.leaseTime(), options.renewal()));
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
        return new SemaphoreHandle(this, offered(key(name, Mode.PERMIT), "semaphores"), checked);
    }

    private LockKey offered(LockKey key, String what) {
        if (!backend.supports(key.mode())) {
            throw new UnsupportedOperationException(what + " are not offered by this store: " + backend);
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
        for (Mode mode : new Mode[] {Mode.EXCLUSIVE, Mode.FAIR, Mode.WRITE, Mode.PERMIT}) {
            LockInfo info = join(call("describe '" + name + "'", () -> backend.describe(key(name, mode))));
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
        List<LockInfo> all = new ArrayList<>(join(call("list", () -> backend.list(options.namespace(), prefix))));
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
        for (Mode mode : new Mode[] {Mode.EXCLUSIVE, Mode.FAIR, Mode.WRITE, Mode.PERMIT}) {
            any |= join(call("force-release '" + name + "'", () -> backend.forceRelease(key(name, mode))));
        }
        return any;
    }

    // ---- acquisition

    /**
     * Starts an acquisition; the result completes with the lease or the failure.
     */
    Acquisition start(LockKey key, Duration wait, long leaseMillis, boolean renew, int permits, String downgradeFrom) {
        Checks.nonNegative(wait, "wait");
        if (closed) {
            throw new LockException("the LockClient is closed");
        }
        Acquisition acquisition = new Acquisition(
                this, key, newOwner(), Checks.saturatedNanos(wait), leaseMillis, renew, permits, downgradeFrom);
        LocalQueue.enqueue(this, acquisition);
        return acquisition;
    }

    /** Blocks for an acquisition, honouring interrupts: an interrupted caller leaves nothing held. */
    static <T extends Lease> T await(CompletableFuture<T> result, Runnable cancel, boolean interruptible)
            throws InterruptedException {
        boolean interrupted = false;
        try {
            while (true) {
                try {
                    return result.get();
                } catch (InterruptedException e) {
                    if (interruptible) {
                        cancel.run();
                        if (result.isDone() && !result.isCompletedExceptionally() && !result.isCancelled()) {
                            result.join().close();
                        }
                        throw e;
                    }
                    interrupted = true;
                } catch (ExecutionException e) {
                    throw rethrow(e.getCause());
                } catch (CancellationException e) {
                    throw new LockException("the acquisition was cancelled", e);
                }
            }
        } finally {
            if (interrupted) {
                Thread.currentThread().interrupt();
            }
        }
    }

    /** Blocks for an acquisition; an interrupt cancels it and becomes a {@link LockException}. */
    static <T extends Lease> T awaitUninterruptibly(CompletableFuture<T> result, Runnable cancel) {
        try {
            return await(result, cancel, true);
        } catch (InterruptedException e) {
            Thread.currentThread().interrupt();
            throw new LockException("interrupted while waiting for the lock", e);
        }
    }

    static RuntimeException rethrow(Throwable t) {
        Throwable cause = t instanceof CompletionException && t.getCause() != null ? t.getCause() : t;
        if (cause instanceof LockException e) {
            // Re-create so that the stack trace shows the caller, keeping the original as the cause.
            return copy(e);
        }
        if (cause instanceof RuntimeException e) {
            return e;
        }
        if (cause instanceof Error e) {
            throw e;
        }
        return new LockException(String.valueOf(cause.getMessage()), cause);
    }

    private static LockException copy(LockException e) {
        LockException c;
        if (e instanceof dev.dlock.LockTimeoutException) {
            c = new dev.dlock.LockTimeoutException(e.getMessage());
        } else if (e instanceof dev.dlock.LeaseLostException) {
            c = new dev.dlock.LeaseLostException(e.getMessage());
        } else if (e instanceof dev.dlock.LockRejectedException) {
            c = new dev.dlock.LockRejectedException(e.getMessage());
        } else if (e instanceof LockBackendException) {
            return new LockBackendException(e.getMessage(), e.getCause() != null ? e.getCause() : e);
        } else {
            return new LockException(e.getMessage(), e.getCause() != null ? e.getCause() : e);
        }
        c.initCause(e);
        return c;
    }

    /**
     * A public future for an internal result: completes on the common pool; cancelling it cancels the
     * acquisition; a lease that arrives after the public future was completed otherwise is released.
     */
    static CompletableFuture<Lease> publicFuture(CompletableFuture<? extends Lease> result, Runnable cancel) {
        CompletableFuture<Lease> pub = new CompletableFuture<>();
        pub.whenComplete((v, e) -> {
            if (e != null) {
                cancel.run();
                // A grant that arrived but is not yet handed over goes back now, not after the hop below
                // (which waits for a common-pool thread; until then heldLeases() would list it).
                if (result.isDone()
                        && !result.isCompletedExceptionally()
                        && result.join() instanceof LeaseImpl granted) {
                    granted.releaseAsync();
                }
            }
        });
        result.whenComplete((lease, error) -> CompletableFuture.runAsync(() -> {
            if (error != null) {
                pub.completeExceptionally(
                        error instanceof CompletionException && error.getCause() != null ? error.getCause() : error);
            } else if (!pub.complete(lease)) {
                lease.close();
            }
        }));
        return pub;
    }

    // ---- store calls

    /** Runs one store operation bounded by the operation timeout; see {@link StoreCalls#call}. */
    <T> CompletableFuture<T> call(String what, Supplier<? extends CompletionStage<T>> op) {
        return calls.call(what, op);
    }

    <T> T join(CompletableFuture<T> f) {
        try {
            return f.join();
        } catch (CompletionException | CancellationException e) {
            throw rethrow(e);
        }
    }

    ScheduledFuture<?> schedule(Runnable task, long delayNanos) {
        try {
            return scheduler.schedule(task, Math.max(0, delayNanos), TimeUnit.NANOSECONDS);
        } catch (RejectedExecutionException e) {
            return null; // closed: the task's owner is failed by close()
        }
    }

    // ---- events

    /** Called by the backend or by a local release: a resource may be free. */
    void wake(LockKey anyModeKey, String nextOwner) {
        for (Mode mode : Mode.values()) {
            if (mode.kind().equals(anyModeKey.kind())) {
                LocalQueue queue = queues.get(anyModeKey.withMode(mode));
                if (queue != null) {
                    queue.wakeHead(nextOwner);
                }
            }
        }
    }

    boolean isClosed() {
        return closed;
    }

    /**
     * Releases every lease and fails waits (each bounded by the operation timeout), lets calls on their
     * way settle, stops the scheduler, closes the backend.
     */
    @Override
    public void close() {
        if (closed) {
            return;
        }
        closed = true;
        for (LocalQueue queue : queues.values()) {
            queue.failAll(new LockException("the LockClient was closed while waiting"));
        }
        for (Lease lease : watchdog.held()) {
            ((LeaseImpl) lease).releaseAsync();
        }
        // Best effort: what could not be released in time expires by its lease time.
        calls.awaitAnswers();
        subscriptions.closeAll();
        scheduler.shutdownNow();
        try {
            backend.close();
        } finally {
            try {
                scheduler.awaitTermination(timeoutNanos, TimeUnit.NANOSECONDS);
            } catch (InterruptedException e) {
                Thread.currentThread().interrupt();
            }
            events.close(timeoutNanos);
        }
    }

    @Override
    public String toString() {
        return "namespace=" + options.namespace() + ", backend="
                + backend.getClass().getSimpleName() + (closed ? ", closed" : "");
    }
}
