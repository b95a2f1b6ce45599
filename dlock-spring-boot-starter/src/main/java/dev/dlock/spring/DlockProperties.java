package dev.dlock.spring;

import java.time.Duration;
import org.springframework.boot.context.properties.ConfigurationProperties;
import org.springframework.boot.context.properties.NestedConfigurationProperty;
import org.springframework.validation.Errors;
import org.springframework.validation.Validator;

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
 *
 * <p>The values are checked while they are bound: a bad one stops the application's start with Spring
 * Boot's report naming the property, the value and the rule.
 */
@ConfigurationProperties("dlock")
public class DlockProperties implements Validator {
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

    @NestedConfigurationProperty
    private final DlockMetricsProperties metrics = new DlockMetricsProperties();

    @NestedConfigurationProperty
    private final DlockAopProperties aop = new DlockAopProperties();

    @NestedConfigurationProperty
    private final DlockRedisProperties redis = new DlockRedisProperties();

    @NestedConfigurationProperty
    private final DlockJdbcProperties jdbc = new DlockJdbcProperties();

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
    public DlockMetricsProperties getMetrics() {
        return metrics;
    }

    /**
     * The annotation settings.
     *
     * @return the settings
     */
    public DlockAopProperties getAop() {
        return aop;
    }

    /**
     * The settings for a store built from the application's Redis connection factory.
     *
     * @return the settings
     */
    public DlockRedisProperties getRedis() {
        return redis;
    }

    /**
     * The settings for a store built from the application's {@code DataSource}.
     *
     * @return the settings
     */
    public DlockJdbcProperties getJdbc() {
        return jdbc;
    }

    /**
     * Whether this validates {@code type}: only {@link DlockProperties}.
     *
     * @param type the class Spring Boot binds
     * @return true for this class
     */
    @Override
    public boolean supports(Class<?> type) {
        return DlockProperties.class.isAssignableFrom(type);
    }

    /**
     * Checks the bound values; Spring Boot calls this at binding.
     *
     * @param target these properties
     * @param errors where each bad value is reported, with its rule
     */
    @Override
    public void validate(Object target, Errors errors) {
        PropertyChecks.check((DlockProperties) target, errors);
    }
}
