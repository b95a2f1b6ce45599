package dev.dlock.zookeeper;

import java.io.IOException;
import java.util.List;
import java.util.concurrent.CountDownLatch;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.atomic.AtomicInteger;
import java.util.function.Consumer;
import org.apache.curator.utils.ZookeeperFactory;
import org.apache.zookeeper.AddWatchMode;
import org.apache.zookeeper.AsyncCallback;
import org.apache.zookeeper.CreateMode;
import org.apache.zookeeper.KeeperException;
import org.apache.zookeeper.Op;
import org.apache.zookeeper.OpResult;
import org.apache.zookeeper.Watcher;
import org.apache.zookeeper.ZooKeeper;
import org.apache.zookeeper.client.ZKClientConfig;
import org.apache.zookeeper.data.ACL;
import org.apache.zookeeper.data.Stat;

/**
 * A ZooKeeper client handle that counts the requests it sends: writes (create, delete, setData, multi)
 * and everything else (reads, watch management). Installed in Curator through {@link #factory}. Each
 * public request method counts once, even when ZooKeeper's overloads call each other.
 */
final class CountingZooKeeper extends ZooKeeper {
    /** Request counts of every handle a factory made. */
    static final class Counter {
        final AtomicInteger writes = new AtomicInteger();
        final AtomicInteger reads = new AtomicInteger();
        /** Watches the server confirmed through the asynchronous {@code addWatch}. */
        final AtomicInteger watchesSet = new AtomicInteger();
        /**
         * When set, the asynchronous {@code addWatch} returns only after its answer was handled: the
         * caller's future is then complete before the call that sent the request returns.
         */
        volatile boolean answerWatchesBeforeReturning;
        /**
         * When set, the next asynchronous {@code getChildren} returns only after its answer was handled
         * and this ran (on the calling thread): what the caller attaches to the request's future after it
         * returned then comes after that answer and after whatever this made the event thread handle.
         */
        final java.util.concurrent.atomic.AtomicReference<Runnable> afterChildrenAnswered =
                new java.util.concurrent.atomic.AtomicReference<>();
        /** The watch requests (add, remove) and their answers, in order, for failure messages. */
        final java.util.Queue<String> watchLog = new java.util.concurrent.ConcurrentLinkedQueue<>();

        void log(String entry) {
            watchLog.add(System.nanoTime() / 1_000_000 % 100_000 + " " + entry);
        }

        int requests() {
            return writes.get() + reads.get();
        }

        void reset() {
            writes.set(0);
            reads.set(0);
        }

        @Override
        public String toString() {
            return requests() + " requests (" + writes.get() + " writes)";
        }
    }

    private static final ThreadLocal<int[]> DEPTH = ThreadLocal.withInitial(() -> new int[1]);
    private final Counter counter;

    private CountingZooKeeper(
            String connectString,
            int sessionTimeout,
            Watcher watcher,
            boolean readOnly,
            ZKClientConfig config,
            Counter counter)
            throws IOException {
        super(connectString, sessionTimeout, watcher, readOnly, config);
        this.counter = counter;
    }

    /** A Curator {@code ZookeeperFactory} whose handles count into {@code counter}. */
    static ZookeeperFactory factory(Counter counter) {
        return new ZookeeperFactory() {
            @Override
            public ZooKeeper newZooKeeper(String connectString, int sessionTimeout, Watcher watcher, boolean readOnly)
                    throws IOException {
                return new CountingZooKeeper(
                        connectString, sessionTimeout, watcher, readOnly, new ZKClientConfig(), counter);
            }

            @Override
            public ZooKeeper newZooKeeper(
                    String connectString, int sessionTimeout, Watcher watcher, boolean readOnly, ZKClientConfig config)
                    throws IOException {
                return new CountingZooKeeper(connectString, sessionTimeout, watcher, readOnly, config, counter);
            }
        };
    }

    /** The paths of the persistent recursive watches this handle holds (for leak checks). */
    List<String> persistentRecursiveWatchPaths() {
        return getPersistentRecursiveWatches();
    }

    private Counter enter(boolean write) {
        int[] depth = DEPTH.get();
        if (depth[0]++ == 0) {
            (write ? counter.writes : counter.reads).incrementAndGet();
        }
        return counter;
    }

    private static void awaitQuietly(CountDownLatch latch, String request) {
        try {
            if (!latch.await(10, TimeUnit.SECONDS)) {
                throw new IllegalStateException("no answer to " + request + " within 10 s");
            }
        } catch (InterruptedException e) {
            Thread.currentThread().interrupt();
        }
    }

    private static void exit(Counter c) {
        DEPTH.get()[0]--;
    }

    @Override
    public String create(String path, byte[] data, List<ACL> acl, CreateMode createMode)
            throws KeeperException, InterruptedException {
        Counter c = enter(true);
        try {
            return super.create(path, data, acl, createMode);
        } finally {
            exit(c);
        }
    }

    @Override
    public String create(String path, byte[] data, List<ACL> acl, CreateMode createMode, Stat stat)
            throws KeeperException, InterruptedException {
        Counter c = enter(true);
        try {
            return super.create(path, data, acl, createMode, stat);
        } finally {
            exit(c);
        }
    }

    @Override
    public String create(String path, byte[] data, List<ACL> acl, CreateMode createMode, Stat stat, long ttl)
            throws KeeperException, InterruptedException {
        Counter c = enter(true);
        try {
            return super.create(path, data, acl, createMode, stat, ttl);
        } finally {
            exit(c);
        }
    }

    @Override
    public void create(
            String path,
            byte[] data,
            List<ACL> acl,
            CreateMode createMode,
            AsyncCallback.StringCallback cb,
            Object ctx) {
        Counter c = enter(true);
        try {
            super.create(path, data, acl, createMode, cb, ctx);
        } finally {
            exit(c);
        }
    }

    @Override
    public void create(
            String path,
            byte[] data,
            List<ACL> acl,
            CreateMode createMode,
            AsyncCallback.Create2Callback cb,
            Object ctx) {
        Counter c = enter(true);
        try {
            super.create(path, data, acl, createMode, cb, ctx);
        } finally {
            exit(c);
        }
    }

    @Override
    public void create(
            String path,
            byte[] data,
            List<ACL> acl,
            CreateMode createMode,
            AsyncCallback.Create2Callback cb,
            Object ctx,
            long ttl) {
        Counter c = enter(true);
        try {
            super.create(path, data, acl, createMode, cb, ctx, ttl);
        } finally {
            exit(c);
        }
    }

    @Override
    public void delete(String path, int version) throws KeeperException, InterruptedException {
        Counter c = enter(true);
        try {
            super.delete(path, version);
        } finally {
            exit(c);
        }
    }

    @Override
    public void delete(String path, int version, AsyncCallback.VoidCallback cb, Object ctx) {
        Counter c = enter(true);
        try {
            super.delete(path, version, cb, ctx);
        } finally {
            exit(c);
        }
    }

    @Override
    public Stat setData(String path, byte[] data, int version) throws KeeperException, InterruptedException {
        Counter c = enter(true);
        try {
            return super.setData(path, data, version);
        } finally {
            exit(c);
        }
    }

    @Override
    public void setData(String path, byte[] data, int version, AsyncCallback.StatCallback cb, Object ctx) {
        Counter c = enter(true);
        try {
            super.setData(path, data, version, cb, ctx);
        } finally {
            exit(c);
        }
    }

    @Override
    public List<OpResult> multi(Iterable<Op> ops) throws KeeperException, InterruptedException {
        Counter c = enter(true);
        try {
            return super.multi(ops);
        } finally {
            exit(c);
        }
    }

    @Override
    public void multi(Iterable<Op> ops, AsyncCallback.MultiCallback cb, Object ctx) {
        Counter c = enter(true);
        try {
            super.multi(ops, cb, ctx);
        } finally {
            exit(c);
        }
    }

    @Override
    public Stat exists(String path, Watcher watcher) throws KeeperException, InterruptedException {
        Counter c = enter(false);
        try {
            return super.exists(path, watcher);
        } finally {
            exit(c);
        }
    }

    @Override
    public Stat exists(String path, boolean watch) throws KeeperException, InterruptedException {
        Counter c = enter(false);
        try {
            return super.exists(path, watch);
        } finally {
            exit(c);
        }
    }

    @Override
    public void exists(String path, Watcher watcher, AsyncCallback.StatCallback cb, Object ctx) {
        Counter c = enter(false);
        try {
            super.exists(path, watcher, cb, ctx);
        } finally {
            exit(c);
        }
    }

    @Override
    public void exists(String path, boolean watch, AsyncCallback.StatCallback cb, Object ctx) {
        Counter c = enter(false);
        try {
            super.exists(path, watch, cb, ctx);
        } finally {
            exit(c);
        }
    }

    @Override
    public byte[] getData(String path, Watcher watcher, Stat stat) throws KeeperException, InterruptedException {
        Counter c = enter(false);
        try {
            return super.getData(path, watcher, stat);
        } finally {
            exit(c);
        }
    }

    @Override
    public byte[] getData(String path, boolean watch, Stat stat) throws KeeperException, InterruptedException {
        Counter c = enter(false);
        try {
            return super.getData(path, watch, stat);
        } finally {
            exit(c);
        }
    }

    @Override
    public void getData(String path, Watcher watcher, AsyncCallback.DataCallback cb, Object ctx) {
        Counter c = enter(false);
        try {
            super.getData(path, watcher, cb, ctx);
        } finally {
            exit(c);
        }
    }

    @Override
    public void getData(String path, boolean watch, AsyncCallback.DataCallback cb, Object ctx) {
        Counter c = enter(false);
        try {
            super.getData(path, watch, cb, ctx);
        } finally {
            exit(c);
        }
    }

    @Override
    public List<String> getChildren(String path, Watcher watcher) throws KeeperException, InterruptedException {
        Counter c = enter(false);
        try {
            return super.getChildren(path, watcher);
        } finally {
            exit(c);
        }
    }

    @Override
    public List<String> getChildren(String path, boolean watch) throws KeeperException, InterruptedException {
        Counter c = enter(false);
        try {
            return super.getChildren(path, watch);
        } finally {
            exit(c);
        }
    }

    @Override
    public void getChildren(String path, Watcher watcher, AsyncCallback.ChildrenCallback cb, Object ctx) {
        Counter c = enter(false);
        try {
            super.getChildren(path, watcher, cb, ctx);
        } finally {
            exit(c);
        }
    }

    @Override
    public void getChildren(String path, boolean watch, AsyncCallback.ChildrenCallback cb, Object ctx) {
        Counter c = enter(false);
        try {
            super.getChildren(path, watch, cb, ctx);
        } finally {
            exit(c);
        }
    }

    @Override
    public List<String> getChildren(String path, Watcher watcher, Stat stat)
            throws KeeperException, InterruptedException {
        Counter c = enter(false);
        try {
            return super.getChildren(path, watcher, stat);
        } finally {
            exit(c);
        }
    }

    @Override
    public List<String> getChildren(String path, boolean watch, Stat stat)
            throws KeeperException, InterruptedException {
        Counter c = enter(false);
        try {
            return super.getChildren(path, watch, stat);
        } finally {
            exit(c);
        }
    }

    @Override
    public void getChildren(String path, Watcher watcher, AsyncCallback.Children2Callback cb, Object ctx) {
        Counter c = enter(false);
        try {
            getChildrenAnsweredFirst(callback -> super.getChildren(path, watcher, callback, ctx), cb);
        } finally {
            exit(c);
        }
    }

    @Override
    public void getChildren(String path, boolean watch, AsyncCallback.Children2Callback cb, Object ctx) {
        Counter c = enter(false);
        try {
            getChildrenAnsweredFirst(callback -> super.getChildren(path, watch, callback, ctx), cb);
        } finally {
            exit(c);
        }
    }

    /**
     * Sends an async {@code getChildren} with {@code cb}; when {@link Counter#afterChildrenAnswered} is set,
     * returns only after the answer was handled and that hook ran (an answer that comes before its request
     * returns).
     */
    private void getChildrenAnsweredFirst(
            Consumer<AsyncCallback.Children2Callback> send, AsyncCallback.Children2Callback cb) {
        Runnable after = counter.afterChildrenAnswered.getAndSet(null);
        if (after == null) {
            send.accept(cb);
            return;
        }
        CountDownLatch handled = new CountDownLatch(1);
        send.accept((rc, p, context, children, stat) -> {
            cb.processResult(rc, p, context, children, stat);
            handled.countDown();
        });
        awaitQuietly(handled, "getChildren");
        after.run();
    }

    @Override
    public void sync(String path, AsyncCallback.VoidCallback cb, Object ctx) {
        Counter c = enter(false);
        try {
            super.sync(path, cb, ctx);
        } finally {
            exit(c);
        }
    }

    @Override
    public void addWatch(String basePath, Watcher watcher, AddWatchMode mode)
            throws KeeperException, InterruptedException {
        Counter c = enter(false);
        try {
            super.addWatch(basePath, watcher, mode);
        } finally {
            exit(c);
        }
    }

    @Override
    public void addWatch(String basePath, AddWatchMode mode) throws KeeperException, InterruptedException {
        Counter c = enter(false);
        try {
            super.addWatch(basePath, mode);
        } finally {
            exit(c);
        }
    }

    @Override
    public void addWatch(
            String basePath, Watcher watcher, AddWatchMode mode, AsyncCallback.VoidCallback cb, Object ctx) {
        Counter c = enter(false);
        try {
            counter.log("add " + basePath + " sent");
            CountDownLatch handled = new CountDownLatch(1);
            AsyncCallback.VoidCallback counting = (rc, path, context) -> {
                counter.log("add " + path + " answered " + KeeperException.Code.get(rc));
                if (rc == KeeperException.Code.OK.intValue()) {
                    counter.watchesSet.incrementAndGet();
                }
                cb.processResult(rc, path, context);
                handled.countDown();
            };
            super.addWatch(basePath, watcher, mode, counting, ctx);
            if (counter.answerWatchesBeforeReturning) {
                awaitQuietly(handled, "addWatch");
            }
        } finally {
            exit(c);
        }
    }

    @Override
    public void addWatch(String basePath, AddWatchMode mode, AsyncCallback.VoidCallback cb, Object ctx) {
        Counter c = enter(false);
        try {
            super.addWatch(basePath, mode, cb, ctx);
        } finally {
            exit(c);
        }
    }

    @Override
    public void removeWatches(String path, Watcher watcher, Watcher.WatcherType watcherType, boolean local)
            throws KeeperException, InterruptedException {
        Counter c = enter(false);
        try {
            super.removeWatches(path, watcher, watcherType, local);
        } finally {
            exit(c);
        }
    }

    @Override
    public void removeWatches(
            String path,
            Watcher watcher,
            Watcher.WatcherType watcherType,
            boolean local,
            AsyncCallback.VoidCallback cb,
            Object ctx) {
        Counter c = enter(false);
        try {
            counter.log("remove " + path + " sent");
            AsyncCallback.VoidCallback logging = (rc, p, context) -> {
                counter.log("remove " + p + " answered " + KeeperException.Code.get(rc));
                cb.processResult(rc, p, context);
            };
            super.removeWatches(path, watcher, watcherType, local, logging, ctx);
        } finally {
            exit(c);
        }
    }
}
