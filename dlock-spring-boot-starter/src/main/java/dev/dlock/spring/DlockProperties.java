package dev.dlock.spring;

import java.time.Duration;
import java.util.ArrayList;
import java.util.List;
import org.springframework.boot.context.properties.ConfigurationProperties;

/**
 * The {@code dlock.*} properties. Every option of the {@link dev.dlock.LockClient} builder has one; unset
 * options keep the library's defaults, shown here.
 *
 * <pre>{@code
 * dlock:
 *   uri: redis://localhost:6379
 *   namespace: billing
 *   lease-time: 30s
 *   wait-time: 10s
 *   local-queue-limit: 500
 *   metrics:
 *     name-patterns: ["order:*", "invoice:*"]
 * }</pre>
 */
@ConfigurationProperties("dlock")
public class DlockProperties {
    /**
     * The lock store, for example redis://localhost:6379, jdbc:postgresql://db/app or mem: (one JVM
     * only). When unset, the client is built from a LockBackendFactory bean, or from the application's
     * own store client (a Lettuce connection factory, a DataSource, a CuratorFramework) when the matching
     * dlock backend module is on the class path.
     */
    private String uri;

    /**
     * Which of the application's store clients to use when several qualify and dlock.uri is unset:
     * redis, jdbc or zookeeper.
     */
    private String backend;

    /** Separates applications sharing one store: 1 to 64 letters, digits, '_', '.' or '-'. */
    private String namespace = "dlock";

    /** How long the store keeps a grant without renewal. */
    private Duration leaseTime = Duration.ofSeconds(30);

    /**
     * The default wait for a lock: of DistributedLock.acquire() and of @WithLock methods without
     * their own waitTime.
     */
    private Duration waitTime = Duration.ofSeconds(30);

    /** The longest one store operation may take before it fails. */
    private Duration operationTimeout = Duration.ofSeconds(5);

    /** Whether held leases are renewed in the background until released. */
    private boolean renewal = true;

    /**
     * How many callers of this instance may wait for one lock name at once; further callers are turned
     * away at once with LockRejectedException (load shedding). Unset means unlimited.
     */
    private Integer localQueueLimit;

    /**
     * Whether to check at startup that the store answers, failing the application's start with a message
     * naming the store when it does not.
     */
    private boolean startupCheck = true;

    private final Metrics metrics = new Metrics();

    private final Aop aop = new Aop();

    private final Redis redis = new Redis();

    private final Jdbc jdbc = new Jdbc();

    /**
     * The store URI.
     *
     * @return the URI, or null when the client is built from application beans
     */
    public String getUri() {
        return uri;
    }

    /**
     * Sets the store URI.
     *
     * @param uri a backend URI
     */
    public void setUri(String uri) {
        this.uri = uri;
    }

    /**
     * Which application store client to use.
     *
     * @return redis, jdbc, zookeeper, or null to take the only one there is
     */
    public String getBackend() {
        return backend;
    }

    /**
     * Sets which application store client to use.
     *
     * @param backend redis, jdbc or zookeeper
     */
    public void setBackend(String backend) {
        this.backend = backend;
    }

    /**
     * The namespace.
     *
     * @return the namespace
     */
    public String getNamespace() {
        return namespace;
    }

    /**
     * Sets the namespace.
     *
     * @param namespace 1 to 64 characters of letters, digits, {@code _}, {@code .} and {@code -}
     */
    public void setNamespace(String namespace) {
        this.namespace = namespace;
    }

    /**
     * The lease time.
     *
     * @return the lease time
     */
    public Duration getLeaseTime() {
        return leaseTime;
    }

    /**
     * Sets the lease time.
     *
     * @param leaseTime at least 10 ms
     */
    public void setLeaseTime(Duration leaseTime) {
        this.leaseTime = leaseTime;
    }

    /**
     * The default wait.
     *
     * @return the wait time
     */
    public Duration getWaitTime() {
        return waitTime;
    }

    /**
     * Sets the default wait.
     *
     * @param waitTime zero or positive
     */
    public void setWaitTime(Duration waitTime) {
        this.waitTime = waitTime;
    }

    /**
     * The operation timeout.
     *
     * @return the timeout
     */
    public Duration getOperationTimeout() {
        return operationTimeout;
    }

    /**
     * Sets the operation timeout.
     *
     * @param operationTimeout positive
     */
    public void setOperationTimeout(Duration operationTimeout) {
        this.operationTimeout = operationTimeout;
    }

    /**
     * Whether leases are renewed.
     *
     * @return true to renew
     */
    public boolean isRenewal() {
        return renewal;
    }

    /**
     * Sets whether leases are renewed.
     *
     * @param renewal true to renew
     */
    public void setRenewal(boolean renewal) {
        this.renewal = renewal;
    }

    /**
     * The local queue limit.
     *
     * @return the limit, or null for unlimited
     */
    public Integer getLocalQueueLimit() {
        return localQueueLimit;
    }

    /**
     * Sets the local queue limit.
     *
     * @param localQueueLimit at least 1, or null for unlimited
     */
    public void setLocalQueueLimit(Integer localQueueLimit) {
        this.localQueueLimit = localQueueLimit;
    }

    /**
     * Whether the startup check runs.
     *
     * @return true to check
     */
    public boolean isStartupCheck() {
        return startupCheck;
    }

    /**
     * Sets whether the startup check runs.
     *
     * @param startupCheck true to check
     */
    public void setStartupCheck(boolean startupCheck) {
        this.startupCheck = startupCheck;
    }

    /**
     * The metrics settings.
     *
     * @return the settings
     */
    public Metrics getMetrics() {
        return metrics;
    }

    /**
     * The annotation settings.
     *
     * @return the settings
     */
    public Aop getAop() {
        return aop;
    }

    /**
     * The settings for a store built from the application's Redis connection factory.
     *
     * @return the settings
     */
    public Redis getRedis() {
        return redis;
    }

    /**
     * The settings for a store built from the application's {@code DataSource}.
     *
     * @return the settings
     */
    public Jdbc getJdbc() {
        return jdbc;
    }

    /**
     * The {@code dlock.redis.*} properties: used when the store is the application's Lettuce connection
     * factory. With {@code dlock.uri}, put these in the URI instead.
     */
    public static class Redis {
        /**
         * How many replicas must acknowledge every grant and renewal (Redis WAIT) before it counts; 0 for
         * none. Standalone and Sentinel only.
         */
        private int replicaAcks;

        /** How long a grant or renewal waits for the replica acknowledgements. */
        private Duration replicaAckTimeout = Duration.ofMillis(100);

        /** Creates the defaults. */
        public Redis() {}

        /**
         * The replica acknowledgements.
         *
         * @return how many replicas must acknowledge, 0 for none
         */
        public int getReplicaAcks() {
            return replicaAcks;
        }

        /**
         * Sets the replica acknowledgements.
         *
         * @param replicaAcks how many replicas must acknowledge, 0 for none
         */
        public void setReplicaAcks(int replicaAcks) {
            this.replicaAcks = replicaAcks;
        }

        /**
         * The acknowledgement timeout.
         *
         * @return the timeout
         */
        public Duration getReplicaAckTimeout() {
            return replicaAckTimeout;
        }

        /**
         * Sets the acknowledgement timeout.
         *
         * @param replicaAckTimeout positive, shorter than the operation timeout
         */
        public void setReplicaAckTimeout(Duration replicaAckTimeout) {
            this.replicaAckTimeout = replicaAckTimeout;
        }
    }

    /**
     * The {@code dlock.jdbc.*} properties: used when the store is the application's {@code DataSource}.
     * With {@code dlock.uri}, use the URI parameters ({@code dlock.tablePrefix}, {@code dlock.createTables},
     * ...) instead.
     */
    public static class Jdbc {
        /** The prefix of dlock's two table names (<prefix>locks and <prefix>entries). */
        private String tablePrefix = "dlock_";

        /**
         * Whether to create the tables at startup when they are missing. When false, the startup fails if
         * they do not exist.
         */
        private boolean createTables;

        /**
         * Whether exclusive locks use the database's advisory locks on one dedicated session instead of
         * lease rows (PostgreSQL, MySQL, MariaDB).
         */
        private boolean advisory;

        /** How many threads run the backend's blocking JDBC calls. */
        private int threads = 4;

        /** Creates the defaults. */
        public Jdbc() {}

        /**
         * The table prefix.
         *
         * @return the prefix
         */
        public String getTablePrefix() {
            return tablePrefix;
        }

        /**
         * Sets the table prefix.
         *
         * @param tablePrefix 1 to 40 characters of {@code [a-z0-9_]}, not starting with a digit
         */
        public void setTablePrefix(String tablePrefix) {
            this.tablePrefix = tablePrefix;
        }

        /**
         * Whether missing tables are created.
         *
         * @return true to create them
         */
        public boolean isCreateTables() {
            return createTables;
        }

        /**
         * Sets whether missing tables are created.
         *
         * @param createTables true to create them
         */
        public void setCreateTables(boolean createTables) {
            this.createTables = createTables;
        }

        /**
         * Whether advisory locks are used.
         *
         * @return true for advisory locks
         */
        public boolean isAdvisory() {
            return advisory;
        }

        /**
         * Sets whether advisory locks are used.
         *
         * @param advisory true for advisory locks
         */
        public void setAdvisory(boolean advisory) {
            this.advisory = advisory;
        }

        /**
         * The JDBC thread count.
         *
         * @return the count
         */
        public int getThreads() {
            return threads;
        }

        /**
         * Sets the JDBC thread count.
         *
         * @param threads 1 to 64
         */
        public void setThreads(int threads) {
            this.threads = threads;
        }
    }

    /** The {@code dlock.metrics.*} properties. */
    public static class Metrics {
        /** Whether lock events are recorded as Micrometer meters when a MeterRegistry bean exists. */
        private boolean enabled = true;

        /**
         * Lock name patterns used as the 'name' tag, where '*' matches any characters, for example
         * 'order:*'. The first match wins; names matching none are tagged 'other', so the number of
         * meters stays bounded however many lock names there are.
         */
        private List<String> namePatterns = new ArrayList<>();

        /** Creates the defaults. */
        public Metrics() {}

        /**
         * Whether metrics are recorded.
         *
         * @return true to record
         */
        public boolean isEnabled() {
            return enabled;
        }

        /**
         * Sets whether metrics are recorded.
         *
         * @param enabled true to record
         */
        public void setEnabled(boolean enabled) {
            this.enabled = enabled;
        }

        /**
         * The name patterns.
         *
         * @return the patterns, in matching order
         */
        public List<String> getNamePatterns() {
            return namePatterns;
        }

        /**
         * Sets the name patterns.
         *
         * @param namePatterns the patterns, in matching order
         */
        public void setNamePatterns(List<String> namePatterns) {
            this.namePatterns = namePatterns;
        }
    }

    /** The {@code dlock.aop.*} properties. */
    public static class Aop {
        /** Whether methods annotated with @WithLock are advised. */
        private boolean enabled = true;

        /**
         * The order of the @WithLock advice among other advice on the same method. The default
         * runs it outside @Transactional and @Cacheable (whose order is the lowest precedence), so that a
         * transaction commits before the lock is released.
         */
        private int order = DEFAULT_ORDER;

        /** The default {@link #getOrder() order}: {@code Ordered.LOWEST_PRECEDENCE - 1000}. */
        public static final int DEFAULT_ORDER = Integer.MAX_VALUE - 1000;

        /** Creates the defaults. */
        public Aop() {}

        /**
         * Whether the annotation is active.
         *
         * @return true when active
         */
        public boolean isEnabled() {
            return enabled;
        }

        /**
         * Sets whether the annotation is active.
         *
         * @param enabled true to activate
         */
        public void setEnabled(boolean enabled) {
            this.enabled = enabled;
        }

        /**
         * The advice order.
         *
         * @return the order
         */
        public int getOrder() {
            return order;
        }

        /**
         * Sets the advice order.
         *
         * @param order the order, lower runs further outside
         */
        public void setOrder(int order) {
            this.order = order;
        }
    }
}
