package dev.dlock.zookeeper;

import static dev.dlock.zookeeper.Background.code;
import static dev.dlock.zookeeper.Background.failure;

import dev.dlock.LockBackendException;
import dev.dlock.spi.LockBackend.Subscription;
import dev.dlock.spi.LockKey;
import dev.dlock.spi.Mode;
import dev.dlock.spi.WakeListener;
import dev.dlock.zookeeper.NodeLayout.Entry;
import java.util.List;
import java.util.Set;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.ConcurrentHashMap;
import java.util.concurrent.CopyOnWriteArrayList;
import java.util.concurrent.ScheduledExecutorService;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.atomic.AtomicBoolean;
import org.apache.curator.framework.CuratorFramework;
import org.apache.curator.utils.ZKPaths;
import org.apache.zookeeper.AddWatchMode;
import org.apache.zookeeper.KeeperException;
import org.apache.zookeeper.WatchedEvent;
import org.apache.zookeeper.Watcher;

/**
 * Wake-ups: who of this client wants to hear that a resource may be free, and the watches that tell.
 *
 * <p>Owns: the engine's subscriptions by resource path ({@link Interest}), each semaphore's persistent
 * recursive watch, and the waiting queue entries by resource directory. Three kinds of watch end here:
 * the data watch on an exclusive node (every subscriber of that lock is woken), the data watch a waiting
 * entry sets on the entry it waits for (only that waiter is woken, with its owner id), and a semaphore's
 * persistent watch (each waiter counts down the entries ahead of it and is woken when admitted).
 *
 * <p>Invariants: at most one persistent watch per client and semaphore, set while some subscriber
 * wants it; a watch the server sets after its subscription gave up (or was cancelled) is removed again,
 * unless a newer subscription uses it; a subscription not confirmed within the operation timeout fails
 * and drops its listener.
 *
 * <p>Threads: watches and answers arrive on ZooKeeper's event thread; subscriptions are made on the
 * engine's threads; the subscription timeout runs on the backend's timer. The interests are changed
 * under the {@code interests} monitor, never held across a request.
 */
final class Wakeups {
    private final CuratorFramework client;
    private final ScheduledExecutorService timer;
    private final long operationTimeoutMs;
    /** Wake-up subscriptions by resource path; guarded by itself for changes. */
    private final ConcurrentHashMap<String, Interest> interests = new ConcurrentHashMap<>();
    /** Waiting entries by resource directory. */
    private final ConcurrentHashMap<String, Set<Node>> waiters = new ConcurrentHashMap<>();
    /** Data watches: on an exclusive node, or on the entry a waiter waits for. */
    final Watcher nodeWatcher = this::nodeEvent;

    private final Watcher permitWatcher = this::permitEvent;
    private volatile boolean closed;

    Wakeups(CuratorFramework client, ScheduledExecutorService timer, long operationTimeoutMs) {
        this.client = client;
        this.timer = timer;
        this.operationTimeoutMs = operationTimeoutMs;
    }

    /**
     * The listeners of one resource, and for semaphores the persistent watch they share. {@code watchSet}
     * (guarded by {@code interests}) turns true when the server confirmed the watch of {@code watch}.
     */
    private static final class Interest {
        final List<WakeListener> listeners = new CopyOnWriteArrayList<>();
        CompletableFuture<Void> watch;
        boolean watchSet;
    }

    CompletableFuture<Subscription> subscribe(LockKey key, WakeListener listener) {
        String resource = NodeLayout.resourcePath(key);
        boolean semaphore = key.mode() == Mode.PERMIT;
        CompletableFuture<Void> live;
        synchronized (interests) {
            Interest interest = interests.computeIfAbsent(resource, r -> new Interest());
            interest.listeners.add(listener);
            if (semaphore && interest.watch == null) {
                addPermitWatch(resource, interest);
            }
            live = semaphore ? interest.watch : CompletableFuture.completedFuture(null);
        }
        Subscription subscription = () -> unsubscribe(resource, listener);
        if (live.isDone() && !live.isCompletedExceptionally()) {
            return CompletableFuture.completedFuture(subscription);
        }
        // Bounded by the operation timeout: a subscription nobody waits for any more is cancelled here,
        // and a watch the server sets after that is removed again (addPermitWatch). Whichever of the
        // answer and the timeout comes first decides; a failure drops the listener before it is reported.
        CompletableFuture<Subscription> result = new CompletableFuture<>();
        AtomicBoolean decided = new AtomicBoolean();
        live.whenComplete((ok, error) -> {
            if (error != null) {
                subscription.cancel();
                if (decided.compareAndSet(false, true)) {
                    result.completeExceptionally(
                            error instanceof RuntimeException e
                                    ? e
                                    : new LockBackendException(error.toString(), error));
                }
            } else if (decided.compareAndSet(false, true)) {
                result.complete(subscription);
            } else {
                subscription.cancel();
            }
        });
        timer.schedule(
                () -> {
                    if (decided.compareAndSet(false, true)) {
                        subscription.cancel();
                        result.completeExceptionally(new LockBackendException("ZooKeeper: the watch on '" + key.name()
                                + "' was not set within " + operationTimeoutMs + " ms"));
                    }
                },
                operationTimeoutMs,
                TimeUnit.MILLISECONDS);
        return result;
    }

    /**
     * Adds a semaphore's persistent watch as {@code wanting}'s watch (called under the {@code interests}
     * monitor); if nobody wants it any more when the server set it, removes it.
     */
    private void addPermitWatch(String resource, Interest wanting) {
        CompletableFuture<Void> watch = new CompletableFuture<>();
        // Before the request: its answer may complete the future before Background.run returns, and the
        // handler below then runs in this thread (it holds the monitor already) and must find it here.
        wanting.watch = watch;
        Background.run(cb -> client.watchers()
                        .add()
                        .withMode(AddWatchMode.PERSISTENT_RECURSIVE)
                        .inBackground(cb)
                        .usingWatcher(permitWatcher)
                        .forPath(resource))
                .whenComplete((event, error) -> {
                    Throwable failed =
                            error != null ? error : code(event) != KeeperException.Code.OK ? failure(event) : null;
                    boolean unwanted;
                    synchronized (interests) {
                        Interest interest = interests.get(resource);
                        boolean wanted = !closed && interest != null && interest.watch == watch;
                        if (wanted && failed == null) {
                            interest.watchSet = true;
                        }
                        // One registration per path and watcher: a newer interest's watch is the same one.
                        unwanted = failed == null && !wanted && (interest == null || interest.watch == null);
                    }
                    if (unwanted) {
                        removePermitWatch(resource);
                    }
                    if (failed != null) {
                        watch.completeExceptionally(failed);
                    } else {
                        watch.complete(null);
                    }
                });
    }

    private void removePermitWatch(String resource) {
        Background.run(cb -> client.watchers()
                .remove(permitWatcher)
                .ofType(Watcher.WatcherType.Any)
                .inBackground(cb)
                .forPath(resource));
    }

    private void unsubscribe(String resource, WakeListener listener) {
        boolean removeWatch;
        synchronized (interests) {
            Interest interest = interests.get(resource);
            if (interest == null || !interest.listeners.remove(listener) || !interest.listeners.isEmpty()) {
                return;
            }
            interests.remove(resource);
            removeWatch = interest.watchSet; // else a watch still on its way is removed when it is set
        }
        if (removeWatch && !closed) {
            removePermitWatch(resource);
        }
    }

    /** After a reconnect: in a new session, set the persistent watches again; wake every subscriber. */
    void reconnected(boolean sameSession) {
        if (!sameSession) {
            synchronized (interests) {
                for (var e : interests.entrySet()) {
                    if (e.getValue().watch != null) {
                        e.getValue().watchSet = false;
                        addPermitWatch(e.getKey(), e.getValue());
                    }
                }
            }
        }
        for (String resource : interests.keySet()) {
            wake(resource, null); // a watch may have been lost with the old session
        }
    }

    /** One-shot data watches: on an exclusive node, or on the entry a waiter waits for. */
    private void nodeEvent(WatchedEvent event) {
        if (event.getType() == Watcher.Event.EventType.None || event.getPath() == null) {
            return;
        }
        String path = event.getPath();
        if (interests.containsKey(path)) {
            wake(path, null); // an exclusive lock's node
        }
        String dir = ZKPaths.getPathAndNode(path).getPath();
        Set<Node> waiting = waiters.get(dir);
        if (waiting != null) {
            for (Node node : waiting) {
                if (path.equals(node.blockerPath)) {
                    wake(dir, node.owner);
                }
            }
        }
    }

    /** The persistent recursive watch of a semaphore: count down the entries ahead of each local waiter. */
    private void permitEvent(WatchedEvent event) {
        if (event.getType() != Watcher.Event.EventType.NodeDeleted || event.getPath() == null) {
            return;
        }
        ZKPaths.PathAndNode parts = ZKPaths.getPathAndNode(event.getPath());
        Entry gone = Entry.parse(parts.getNode());
        Set<Node> waiting = waiters.get(parts.getPath());
        if (gone == null || waiting == null) {
            return;
        }
        for (Node node : waiting) {
            boolean admit;
            synchronized (node) {
                admit = node.ahead != null && node.ahead.remove(gone.sequence()) && node.ahead.size() < node.permits;
            }
            if (admit) {
                wake(parts.getPath(), node.owner);
            }
        }
    }

    /** Tells the subscribers of a resource that it may be free ({@code owner}: the one to try, or null). */
    void wake(String resource, String owner) {
        Interest interest = interests.get(resource);
        if (interest != null) {
            for (WakeListener listener : interest.listeners) {
                listener.wake(owner);
            }
        }
    }

    void addWaiter(Node node) {
        waiters.computeIfAbsent(node.resource, r -> ConcurrentHashMap.newKeySet())
                .add(node);
    }

    void removeWaiter(Node node) {
        waiters.computeIfPresent(node.resource, (r, set) -> {
            set.remove(node);
            return set.isEmpty() ? null : set;
        });
    }

    /** The subscribed resources (for tests). */
    Set<String> subscribedResources() {
        return interests.keySet();
    }

    /**
     * Stops wake-ups; with {@code removeWatches} (the client lives on) also removes the persistent watches
     * that are set.
     */
    void close(boolean removeWatches) {
        closed = true;
        if (!removeWatches) {
            return;
        }
        synchronized (interests) {
            for (var e : interests.entrySet()) {
                if (e.getValue().watchSet) {
                    removePermitWatch(e.getKey());
                }
            }
            interests.clear();
        }
    }
}
