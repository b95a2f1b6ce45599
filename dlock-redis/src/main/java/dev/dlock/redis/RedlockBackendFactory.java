package dev.dlock.redis;

import dev.dlock.LockBackendException;
import dev.dlock.spi.BackendContext;
import dev.dlock.spi.LockBackend;
import dev.dlock.spi.LockBackendFactory;
import java.time.Duration;
import java.util.ArrayList;
import java.util.List;
import java.util.Objects;
import java.util.concurrent.TimeUnit;

/**
 * Opens Redlock backends: locks granted by a majority of N independent Redis masters, one {@link
 * RedisBackendFactory} per master. Made by {@link RedlockBackends} and its builder (where the options
 * and what Redlock guarantees are described). Immutable: the {@code with...} methods return a new
 * factory.
 */
final class RedlockBackendFactory implements LockBackendFactory {
    private final List<String> names;
    private final List<RedisBackendFactory> masters;
    private final boolean allowEviction;
    private final Duration minUptime;
    private final Duration masterTimeout;
    private final HoldBack holdBack;

    RedlockBackendFactory(
            List<String> names,
            List<RedisBackendFactory> masters,
            boolean allowEviction,
            Duration minUptime,
            Duration masterTimeout,
            HoldBack holdBack) {
        checkMasterCount(masters.size());
        this.names = List.copyOf(names);
        this.masters = List.copyOf(masters);
        this.allowEviction = allowEviction;
        this.minUptime = minUptime;
        this.masterTimeout = masterTimeout;
        this.holdBack = Objects.requireNonNull(holdBack, "holdBack");
    }

    static void checkMasterCount(int count) {
        if (count < 3 || count % 2 == 0) {
            throw new IllegalArgumentException("Redlock needs an odd number of at least 3 independent masters, got "
                    + count
                    + (count % 2 == 0 && count >= 3 ? " (an even count adds a master but no tolerated failure)" : ""));
        }
    }

    /** A factory with the delayed-restart rule on; see {@link RedlockBackends.Builder#minUptime}. */
    RedlockBackendFactory withMinUptime(Duration uptime) {
        return new RedlockBackendFactory(
                names, masters, allowEviction, positive(uptime, "minUptime"), masterTimeout, holdBack);
    }

    /** A factory with a per-master answer timeout; see {@link RedlockBackends.Builder#masterTimeout}. */
    RedlockBackendFactory withMasterTimeout(Duration timeout) {
        return new RedlockBackendFactory(
                names, masters, allowEviction, minUptime, positive(timeout, "masterTimeout"), holdBack);
    }

    /** A factory whose backends accept (true) or refuse (false) evicting masters. */
    RedlockBackendFactory withAllowEviction(boolean allow) {
        return new RedlockBackendFactory(names, masters, allow, minUptime, masterTimeout, holdBack);
    }

    /** A factory whose masters hold grants back after a lost state, or not; see the builder. */
    RedlockBackendFactory withHoldBack(HoldBack settings) {
        return new RedlockBackendFactory(names, masters, allowEviction, minUptime, masterTimeout, settings);
    }

    HoldBack holdBack() {
        return holdBack;
    }

    private static Duration positive(Duration value, String name) {
        Objects.requireNonNull(value, name + " must not be null");
        if (value.isNegative() || value.isZero()) {
            throw new IllegalArgumentException(name + " must be positive, got " + value);
        }
        return value;
    }

    /**
     * Connects to every master at once, waiting at most the operation timeout. A minority may be
     * unreachable: they are connected later in the background.
     *
     * @param context the client's operation timeout and callbacks
     * @return an open backend
     * @throws LockBackendException when fewer than a majority of masters can be reached (listing each
     *     master and its error), or a master's {@code maxmemory-policy} evicts
     */
    @Override
    public LockBackend open(BackendContext context) {
        List<RedlockMaster> opened = new ArrayList<>();
        for (int i = 0; i < masters.size(); i++) {
            RedisBackendFactory factory =
                    masters.get(i).withAllowEviction(allowEviction).withHoldBack(holdBack);
            opened.add(new RedlockMaster(names.get(i), factory, context));
        }
        RuntimeException[] failures = new RuntimeException[opened.size()];
        List<Thread> connecting = new ArrayList<>();
        for (int i = 0; i < opened.size(); i++) {
            int index = i;
            Thread thread = new Thread(() -> failures[index] = opened.get(index).open(), "dlock-redlock-open-" + i);
            thread.setDaemon(true);
            thread.start();
            connecting.add(thread);
        }
        // Each attempt gives up after the connect timeout (the operation timeout); the margin covers a
        // cold JVM loading the client library's classes on a busy machine.
        long deadline = System.nanoTime() + 2 * context.operationTimeout().toNanos() + TimeUnit.SECONDS.toNanos(2);
        int reached = 0;
        StringBuilder answers = new StringBuilder();
        for (int i = 0; i < connecting.size(); i++) {
            try {
                connecting.get(i).join(Math.max(1, TimeUnit.NANOSECONDS.toMillis(deadline - System.nanoTime())));
            } catch (InterruptedException e) {
                Thread.currentThread().interrupt();
            }
            RuntimeException failure = connecting.get(i).isAlive()
                    ? new LockBackendException("no connection within " + context.operationTimeout())
                    : failures[i];
            if (failure instanceof EvictionCheck.Evicting) {
                opened.forEach(RedlockMaster::close);
                throw failure;
            }
            answers.append(i == 0 ? "" : ", ").append(names.get(i));
            if (failure == null) {
                reached++;
                answers.append(" connected");
            } else {
                answers.append(" error (").append(failure.getMessage()).append(')');
            }
        }
        if (reached < masters.size() / 2 + 1) {
            opened.forEach(RedlockMaster::close);
            throw new LockBackendException("Redlock: fewer than a majority (" + (masters.size() / 2 + 1) + " of "
                    + masters.size() + ") of the masters could be reached: " + answers);
        }
        return new RedlockBackend(opened, context.operationTimeout(), masterTimeout, minUptime);
    }

    @Override
    public String toString() {
        return "RedlockBackendFactory" + names + (minUptime != null ? ", minUptime=" + minUptime : "")
                + (masterTimeout != null ? ", masterTimeout=" + masterTimeout : "")
                + (allowEviction ? ", allowEviction" : "") + ", " + holdBack;
    }
}
