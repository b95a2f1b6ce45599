package dev.dlock.spring;

import dev.dlock.LockClient;
import dev.dlock.spi.LockBackendFactory;
import java.time.Duration;
import java.util.regex.Pattern;
import org.springframework.validation.Errors;

/**
 * The rules of the {@code dlock.*} values, applied while Spring Boot binds them ({@link DlockProperties}
 * validates itself), so that a bad value stops the start with Boot's "APPLICATION FAILED TO START" report
 * naming the property, the value and the rule, before any bean uses it.
 *
 * <p>The client's options are checked by {@link LockClient.Builder} itself: each value is handed to a builder
 * that is never built, and its {@link IllegalArgumentException} message is the rule, so the rules live in one
 * place. The {@code dlock.redis.*} and {@code dlock.jdbc.*} values go to backend builders that need a live
 * client or {@code DataSource}; their documented ranges are checked here.
 */
final class PropertyChecks {
    private static final Pattern TABLE_PREFIX = Pattern.compile("[a-z_][a-z0-9_]{0,39}");

    /** Stands for the store in a builder that only checks values; opening it is a bug. */
    private static final LockBackendFactory NEVER_OPENED = context -> {
        throw new IllegalStateException("a builder used to check dlock.* values is never built");
    };

    private PropertyChecks() {}

    static void check(DlockProperties properties, Errors errors) {
        LockClient.Builder rules = LockClient.builder(NEVER_OPENED);
        builderCheck(errors, "namespace", () -> rules.namespace(properties.getNamespace()));
        builderCheck(errors, "leaseTime", () -> rules.leaseTime(properties.getLeaseTime()));
        builderCheck(errors, "waitTime", () -> rules.waitTime(properties.getWaitTime()));
        builderCheck(errors, "operationTimeout", () -> rules.operationTimeout(properties.getOperationTimeout()));
        if (properties.getLocalQueueLimit() != null) {
            builderCheck(errors, "localQueueLimit", () -> rules.localQueueLimit(properties.getLocalQueueLimit()));
        }

        DlockRedisProperties redis = properties.getRedis();
        if (redis.getReplicaAcks() < 0) {
            errors.rejectValue("redis.replicaAcks", "range", "must be 0 (no acknowledgements) or more");
        }
        Duration ackTimeout = redis.getReplicaAckTimeout();
        if (ackTimeout == null || ackTimeout.isNegative() || ackTimeout.isZero()) {
            errors.rejectValue("redis.replicaAckTimeout", "range", "must be positive");
        }
        Duration maxLease = redis.getMaxLease();
        if (maxLease != null && (maxLease.isNegative() || maxLease.isZero())) {
            errors.rejectValue("redis.maxLease", "range", "must be positive");
        } else if (maxLease != null
                && properties.getLeaseTime() != null
                && properties.getLeaseTime().compareTo(maxLease) > 0) {
            errors.rejectValue(
                    "redis.maxLease", "range", "must be at least dlock.lease-time (" + properties.getLeaseTime() + ")");
        }

        DlockJdbcProperties jdbc = properties.getJdbc();
        if (jdbc.getTablePrefix() == null
                || !TABLE_PREFIX.matcher(jdbc.getTablePrefix()).matches()) {
            errors.rejectValue(
                    "jdbc.tablePrefix",
                    "pattern",
                    "must be 1 to 40 characters of a-z, 0-9 and '_', not starting with a digit");
        }
        if (jdbc.getThreads() < 1 || jdbc.getThreads() > 64) {
            errors.rejectValue("jdbc.threads", "range", "must be between 1 and 64");
        }
    }

    private static void builderCheck(Errors errors, String field, Runnable apply) {
        try {
            apply.run();
        } catch (IllegalArgumentException | NullPointerException e) {
            errors.rejectValue(field, "invalid", e.getMessage());
        }
    }
}
