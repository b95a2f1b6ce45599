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
 * Opens Redlock backends: locks granted by a majority of N independent Redis masters. Made by {@link
 * RedisBackends#redlock} or from a {@code redlock://} URI. Immutable: the {@code with...} methods return
 * a new factory.
 *
 * <pre>{@code
 * LockClient client = LockClient.builder(RedisBackends.redlock(a, b, c)
 *                 .withMinUptime(Duration.ofSeconds(30)))
 *         .build();
 * }</pre>
 *
 * <p>What Redlock guarantees and what not is in {@code docs/dlock-redlock.md}; in short: exclusion while
 * at most a minority of masters misbehaves and no master loses its data in a restart without staying out
 * for one maximum lease time ({@link #withMinUptime} enforces that), fencing tokens that strictly
 * increase while at most a minority loses state, and no fair locks or semaphores ({@code fairLock()} and
 * {@code semaphore()} throw {@link UnsupportedOperationException}).
 */
public final class RedlockBackendFactory implements LockBackendFactory {
    private final List<String> names;
    private final List<RedisBackendFactory> masters;
    private final boolean allowEviction;
    private final Duration minUptime;
    private final Duration masterTimeout;

    RedlockBackendFactory(
            List<String> names,
            List<RedisBackendFactory> masters,
            boolean allowEviction,
            Duration minUptime,
            Duration masterTimeout) {
        checkMasterCount(masters.size());
        this.names = List.copyOf(names);
        this.masters = List.copyOf(masters);
        this.allowEviction = allowEviction;
        this.minUptime = minUptime;
        this.masterTimeout = masterTimeout;
    }

    static void checkMasterCount(int count) {
        if (count < 3 || count % 2 == 0) {
            throw new IllegalArgumentException("Redlock needs an odd number of at least 3 independent masters, got "
                    + count
                    + (count % 2 == 0 && count >= 3 ? " (an even count adds a master but no tolerated failure)" : ""));
        }
    }

    /**
     * A factory whose backends refuse the vote of a master that has been up for less than {@code
     * uptime}: the delayed-restart rule. A master restarted without persistence has forgotten the holds
     * it granted; if it votes again at once, a second client can gather a majority while the first still
     * holds. Set {@code uptime} to the longest lease any client uses (renewed leases included: the lease
     * time, not the hold time). Costs one {@code INFO server} per master and acquisition, pipelined with
     * it. Off by default.
     *
     * @param uptime positive
     * @return a new factory with the check on
     */
    public RedlockBackendFactory withMinUptime(Duration uptime) {
        return new RedlockBackendFactory(names, masters, allowEviction, positive(uptime, "minUptime"), masterTimeout);
    }

    /**
     * A factory whose backends wait at most {@code timeout} for each master's answer to a lock request
     * (acquire, token write-back, renewal). By default a tenth of the lease (at least 10 ms). Always capped
     * at a quarter of the operation timeout, so that every operation ends within it.
     *
     * @param timeout positive
     * @return a new factory
     */
    public RedlockBackendFactory withMasterTimeout(Duration timeout) {
        return new RedlockBackendFactory(names, masters, allowEviction, minUptime, positive(timeout, "masterTimeout"));
    }

    /**
     * A factory whose backends accept masters with an evicting {@code maxmemory-policy}; see {@link
     * RedisBackendFactory#allowingEviction()}.
     *
     * @return a new factory with the check off
     */
    public RedlockBackendFactory allowingEviction() {
        return new RedlockBackendFactory(names, masters, true, minUptime, masterTimeout);
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
            RedisBackendFactory factory = allowEviction ? masters.get(i).allowingEviction() : masters.get(i);
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
                + (allowEviction ? ", allowEviction" : "");
    }
}
