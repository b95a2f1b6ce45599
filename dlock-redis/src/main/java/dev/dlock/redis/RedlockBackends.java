package dev.dlock.redis;

import dev.dlock.spi.LockBackendFactory;
import io.lettuce.core.RedisClient;
import io.lettuce.core.RedisURI;
import java.time.Duration;
import java.util.ArrayList;
import java.util.List;
import java.util.Objects;

/**
 * Factories for Redlock backends: locks granted by a majority of N independent Redis masters. {@code
 * of(...)} with default settings, {@code builder(...)} to set options first; from a {@code redlock://}
 * URI or from Lettuce clients the application already has, one per master.
 *
 * <!-- example: redlock-clients (RedlockBackendsExamplesTest; a test checks that both are the same) -->
 * <pre>{@code
 * List<RedisClient> masters =
 *         masterUris.stream().map(RedisClient::create).toList();
 * LockBackendFactory backend = RedlockBackends.builder(masters.toArray(RedisClient[]::new))
 *         .masterTimeout(Duration.ofMillis(500))
 *         .build();
 * try (LockClient locks = LockClient.builder(backend).build()) {
 *     try (Lease lease = locks.lock("report").acquire(Duration.ofSeconds(5))) {
 *         writeReport(lease.fencingToken());
 *     }
 * }
 * masters.forEach(RedisClient::shutdown);
 * }</pre>
 *
 * <p>What Redlock guarantees and what not is in {@code docs/dlock-redlock.md}; in short: exclusion while
 * at most a minority of masters misbehaves and no master loses its data in a restart without staying out
 * for one maximum lease time (by default each master holds its grants back that long after losing its
 * state, see {@link Builder#maxLease}), fencing tokens that strictly
 * increase while at most a minority loses state, and no fair locks or semaphores ({@code fairLock()} and
 * {@code semaphore()} throw {@link UnsupportedOperationException}). URI syntax: see {@link
 * RedisBackendProvider}.
 */
public final class RedlockBackends {
    private RedlockBackends() {}

    /**
     * A Redlock factory for the masters a URI names, with the options the URI gives.
     *
     * @param uri {@code redlock://[[user:]password@]host:port,host:port,host:port[/database][?options]}, or
     *     {@code redlocks://} for TLS
     * @return a factory for {@code LockClient.builder(LockBackendFactory)}; nothing connects until it is
     *     opened
     * @throws IllegalArgumentException naming what is wrong with the URI, or when it names fewer than 3
     *     masters or an even number of them
     */
    public static LockBackendFactory of(String uri) {
        return builder(uri).build();
    }

    /**
     * A Redlock factory over existing standalone clients, one per independent master (each with a default
     * URI). The clients stay owned by the caller, as with {@link RedisBackends#of(RedisClient)}.
     *
     * @param masters at least 3 clients, an odd number of them
     * @return a factory for {@code LockClient.builder(LockBackendFactory)}
     * @throws IllegalArgumentException for fewer than 3 clients or an even number of them
     */
    public static LockBackendFactory of(RedisClient... masters) {
        return builder(masters).build();
    }

    /**
     * Starts configuring a Redlock backend for the masters a URI names; the URI's own options ({@code
     * allowEviction}, {@code minUptime}, {@code masterTimeout}) are the builder's starting values.
     *
     * @param uri as for {@link #of(String)}
     * @return a builder
     * @throws IllegalArgumentException as for {@link #of(String)}
     */
    public static Builder builder(String uri) {
        RedisUris.Parsed parsed = RedisUris.parse(uri);
        if (parsed.topology() != RedisUris.Topology.REDLOCK) {
            throw new IllegalArgumentException(
                    "not a Redlock URI: '" + RedisUris.redact(uri) + "'; expected redlock:// or redlocks://");
        }
        List<String> names = new ArrayList<>();
        List<RedisBackendFactory> masters = new ArrayList<>();
        for (int i = 0; i < parsed.servers().size(); i++) {
            int index = i;
            RedisURI server = parsed.servers().get(i);
            String name = server.getHost() + ":" + server.getPort();
            names.add(name);
            // Each open parses again: Lettuce URIs are mutable, so every backend gets its own.
            masters.add(new RedisBackendFactory(
                    (timeout, acks) -> RedisBackends.openStandalone(
                            RedisUris.parse(uri).servers().get(index), timeout, false),
                    name,
                    false,
                    0,
                    null,
                    false,
                    HoldBack.DEFAULT));
        }
        Builder builder = new Builder(new RedlockBackendFactory(names, masters, false, null, null, HoldBack.DEFAULT));
        builder.allowEviction(parsed.allowEviction());
        builder.factory = builder.factory.withHoldBack(RedisBackends.hold(parsed));
        if (parsed.minUptime() != null) {
            builder.minUptime(parsed.minUptime());
        }
        if (parsed.masterTimeout() != null) {
            builder.masterTimeout(parsed.masterTimeout());
        }
        return builder;
    }

    /**
     * Starts configuring a Redlock backend over existing standalone clients, one per independent master.
     *
     * @param masters as for {@link #of(RedisClient...)}
     * @return a builder
     * @throws IllegalArgumentException for fewer than 3 clients or an even number of them
     */
    public static Builder builder(RedisClient... masters) {
        Objects.requireNonNull(masters, "masters must not be null");
        RedlockBackendFactory.checkMasterCount(masters.length);
        List<String> names = new ArrayList<>();
        List<RedisBackendFactory> factories = new ArrayList<>();
        for (int i = 0; i < masters.length; i++) {
            names.add("master " + (i + 1));
            RedisClient master = Objects.requireNonNull(masters[i], "master " + (i + 1) + " must not be null");
            factories.add(RedisBackends.fromClient(master));
        }
        return new Builder(new RedlockBackendFactory(names, factories, false, null, null, HoldBack.DEFAULT));
    }

    /** Settings of a Redlock backend. Every setter validates at once. */
    public static final class Builder {
        private RedlockBackendFactory factory;

        private Builder(RedlockBackendFactory factory) {
            this.factory = factory;
        }

        /**
         * Refuses the vote of a master that has been up for less than {@code uptime}: the delayed-restart
         * rule. A master restarted without persistence has forgotten the holds it granted; if it votes
         * again at once, a second client can gather a majority while the first still holds. Set {@code
         * uptime} to the longest lease any client uses (renewed leases included: the lease time, not the
         * hold time). Costs one {@code INFO server} per master and acquisition, pipelined with it. Off by
         * default, where the hold-back ({@link #maxLease}) keeps a restarted master out already; the URI
         * option is {@code minUptime=30s}.
         *
         * @param uptime positive
         * @return this builder
         * @throws IllegalArgumentException if not positive
         */
        public Builder minUptime(Duration uptime) {
            factory = factory.withMinUptime(uptime);
            return this;
        }

        /**
         * How long to wait for each master's answer to a lock request (acquire, token write-back,
         * renewal). By default a tenth of the lease (at least 10 ms). Always capped at a quarter of the
         * operation timeout, so that every operation ends within it. The URI option is {@code
         * masterTimeout=50ms}.
         *
         * @param timeout positive
         * @return this builder
         * @throws IllegalArgumentException if not positive
         */
        public Builder masterTimeout(Duration timeout) {
            factory = factory.withMasterTimeout(timeout);
            return this;
        }

        /**
         * Whether to accept masters with an evicting {@code maxmemory-policy}; see {@link
         * RedisBackends.Builder#allowEviction(boolean)}. Default false; the URI option is {@code
         * allowEviction=true}.
         *
         * @param allow true to skip the check on every master
         * @return this builder
         */
        public Builder allowEviction(boolean allow) {
            factory = factory.withAllowEviction(allow);
            return this;
        }

        /**
         * Declares the longest lease this client asks for, on every master; see {@link
         * RedisBackends.Builder#maxLease}. Default 30 seconds; the URI option is {@code maxLease=30s}. This
         * is the delayed-restart rule, on by default: a master that lost its state (restarted without
         * persistence, or from a file that misses the last writes) refuses to grant (answers busy) until
         * every lease it may have granted before has run out, so a master restarted within a lease time
         * does not vote for a second holder.
         *
         * @param maxLease positive
         * @return this builder
         * @throws IllegalArgumentException if not positive
         */
        public Builder maxLease(Duration maxLease) {
            factory = factory.withHoldBack(factory.holdBack().withMaxLease(maxLease));
            return this;
        }

        /**
         * Opts out of the delayed-restart rule ({@link #maxLease}): a restarted master votes again at once,
         * as before. The cost: a master restarted without persistence within a lease time can vote for a
         * second holder while the first holder's lease is valid. Default false; the URI option is {@code
         * unsafeGrantAfterRestart=true}.
         *
         * @param unsafe true to let a restarted master vote at once
         * @return this builder
         */
        public Builder unsafeGrantAfterRestart(boolean unsafe) {
            factory = factory.withHoldBack(factory.holdBack().withUnsafeGrantAfterRestart(unsafe));
            return this;
        }

        /**
         * The factory to pass to {@code LockClient.builder(LockBackendFactory)}.
         *
         * @return a factory; nothing connects until it is opened
         */
        public LockBackendFactory build() {
            return factory;
        }
    }
}
