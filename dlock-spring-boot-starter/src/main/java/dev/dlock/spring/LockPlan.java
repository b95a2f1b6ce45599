package dev.dlock.spring;

import dev.dlock.DistributedLock;
import dev.dlock.Lease;
import dev.dlock.LockClient;
import dev.dlock.LockException;
import java.lang.reflect.InvocationTargetException;
import java.lang.reflect.Method;
import java.lang.reflect.Modifier;
import java.time.Duration;
import java.util.ArrayList;
import java.util.Arrays;
import java.util.List;
import java.util.Optional;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.CompletionStage;
import java.util.concurrent.Future;
import java.util.stream.Collectors;
import org.springframework.beans.factory.BeanFactory;
import org.springframework.beans.factory.config.ConfigurableBeanFactory;
import org.springframework.boot.convert.DurationStyle;
import org.springframework.util.ClassUtils;
import org.springframework.util.ReflectionUtils;

/**
 * Everything about one {@link WithLock} method that does not change between calls: its keys
 * ({@link LockKeys}), durations, mode, policy, fallback, return kind and where the {@link Lease} goes. Built and
 * checked once, when the bean is proxied, so that a mistake fails the application's start.
 *
 * <p>Concurrency: immutable after construction; {@link #names} builds a fresh evaluation context per call.
 *
 * <p>Failure modes: construction throws {@link IllegalStateException} naming the method and the problem;
 * {@link #names} throws {@link IllegalArgumentException} for a key that evaluates to nothing, before the
 * lock is asked for.
 */
final class LockPlan {
    /** How the method returns, which decides how the lock is held. */
    enum Kind {
        SYNC,
        FUTURE,
        MONO,
        FLUX
    }

    private final Method method;
    private final Class<?> targetClass;
    private final String label;
    private final LockKeys keys;
    private final LockMode mode;
    private final Duration waitTime;
    private final Duration leaseTime;
    /** The least time the lock stays held from its grant, or null for none. */
    private final Duration minHold;

    private final NotAcquired ifNotAcquired;
    private final Method fallback;
    private final boolean fallbackTakesCause;
    private final Kind kind;
    private final int[] leaseParameters;

    private LockPlan(WithLock annotation, Method method, Class<?> targetClass, BeanFactory beanFactory) {
        this.method = method;
        this.targetClass = targetClass;
        this.label = "@WithLock on " + ClassUtils.getShortName(targetClass) + "." + method.getName() + "("
                + Arrays.stream(method.getParameterTypes())
                        .map(Class::getSimpleName)
                        .collect(Collectors.joining(", "))
                + ")";
        this.keys = new LockKeys(label, annotation.key(), method, targetClass, beanFactory);
        this.mode = annotation.mode();
        if (keys.count() > 1 && mode != LockMode.EXCLUSIVE) {
            throw invalid("several keys make a multi-lock, which is EXCLUSIVE only, but mode is " + mode);
        }
        this.waitTime = duration("waitTime", annotation.waitTime(), beanFactory);
        this.leaseTime = duration("leaseTime", annotation.leaseTime(), beanFactory);
        if (leaseTime != null
                && (leaseTime.compareTo(DistributedLock.MIN_LEASE_TIME) < 0
                        || leaseTime.compareTo(DistributedLock.MAX_LEASE_TIME) > 0)) {
            throw invalid("leaseTime must be between 10ms and 365 days, got " + annotation.leaseTime());
        }
        this.minHold = duration("minHold", annotation.minHold(), beanFactory);
        if (minHold != null && (minHold.isNegative() || minHold.compareTo(DistributedLock.MAX_LEASE_TIME) > 0)) {
            throw invalid("minHold must be between 0 and 365 days, got " + annotation.minHold());
        }
        this.kind = kindOf(method.getReturnType());
        this.ifNotAcquired = annotation.ifNotAcquired();
        Class<?> returns = method.getReturnType();
        if (ifNotAcquired == NotAcquired.SKIP && returns.isPrimitive() && returns != void.class) {
            throw invalid("ifNotAcquired = SKIP needs a method that can return nothing, but it returns "
                    + returns.getName() + "; use THROW, a FALLBACK, or a wrapper type");
        }
        String fallbackName = annotation.fallback().strip();
        if (ifNotAcquired == NotAcquired.FALLBACK && fallbackName.isEmpty()) {
            throw invalid("ifNotAcquired = FALLBACK needs the name of the fallback method in 'fallback'");
        }
        if (ifNotAcquired != NotAcquired.FALLBACK && !fallbackName.isEmpty()) {
            throw invalid("fallback '" + fallbackName + "' is set but ifNotAcquired is " + ifNotAcquired
                    + "; set ifNotAcquired = NotAcquired.FALLBACK");
        }
        Method found = fallbackName.isEmpty() ? null : findFallback(fallbackName);
        this.fallback = found;
        this.fallbackTakesCause = found != null && found.getParameterCount() == method.getParameterCount() + 1;
        List<Integer> leaseIndexes = new ArrayList<>();
        Class<?>[] types = method.getParameterTypes();
        for (int i = 0; i < types.length; i++) {
            if (types[i] == Lease.class) {
                leaseIndexes.add(i);
            }
        }
        this.leaseParameters = leaseIndexes.stream().mapToInt(Integer::intValue).toArray();
    }

    /**
     * Reads and checks the annotation of a method.
     *
     * @param method the most specific method (the one of the target class)
     * @throws IllegalStateException naming the method when the annotation is not valid for it
     */
    static LockPlan of(WithLock annotation, Method method, Class<?> targetClass, BeanFactory beanFactory) {
        return new LockPlan(annotation, method, targetClass, beanFactory);
    }

    private IllegalStateException invalid(String problem) {
        return new IllegalStateException(label + ": " + problem);
    }

    private Duration duration(String attribute, String text, BeanFactory beanFactory) {
        String value = text.strip();
        if (value.isEmpty()) {
            return null;
        }
        if (beanFactory instanceof ConfigurableBeanFactory configurable && value.contains("${")) {
            try {
                value = configurable.resolveEmbeddedValue(value);
            } catch (IllegalArgumentException e) {
                throw new IllegalStateException(label + ": " + attribute + " \"" + text + "\": " + e.getMessage(), e);
            }
            value = value == null ? "" : value.strip();
        }
        Duration parsed;
        try {
            parsed = DurationStyle.detectAndParse(value);
        } catch (IllegalArgumentException e) {
            throw invalid(attribute + " \"" + text + "\" is not a duration (use e.g. 500ms, 5s, 2m or PT5S)");
        }
        if (parsed.isNegative()) {
            throw invalid(attribute + " must not be negative, got " + text);
        }
        return parsed;
    }

    private Kind kindOf(Class<?> returns) {
        if (returns == CompletableFuture.class || returns == CompletionStage.class) {
            return Kind.FUTURE;
        }
        if (returns.getName().equals("reactor.core.publisher.Mono")) {
            return Kind.MONO;
        }
        if (returns.getName().equals("reactor.core.publisher.Flux")) {
            return Kind.FLUX;
        }
        if (Future.class.isAssignableFrom(returns)
                || CompletionStage.class.isAssignableFrom(returns)
                || isPublisher(returns)) {
            throw invalid("returns " + returns.getName() + "; of asynchronous types only CompletableFuture,"
                    + " CompletionStage, Mono and Flux are supported (the lock must be held until the result"
                    + " completes)");
        }
        return Kind.SYNC;
    }

    private static boolean isPublisher(Class<?> type) {
        for (Class<?> c : ClassUtils.getAllInterfacesForClassAsSet(type)) {
            if (c.getName().equals("org.reactivestreams.Publisher")) {
                return true;
            }
        }
        return type.getName().equals("org.reactivestreams.Publisher");
    }

    private Method findFallback(String name) {
        Class<?>[] params = method.getParameterTypes();
        Method same = null;
        Method withCause = null;
        for (Method candidate : ReflectionUtils.getUniqueDeclaredMethods(targetClass)) {
            if (!candidate.getName().equals(name) || candidate.isBridge()) {
                continue;
            }
            Class<?>[] types = candidate.getParameterTypes();
            if (Arrays.equals(types, params)) {
                same = candidate;
            } else if (types.length == params.length + 1
                    && Arrays.equals(Arrays.copyOf(types, params.length), params)
                    && types[params.length].isAssignableFrom(LockException.class)) {
                withCause = candidate;
            }
        }
        Method found = withCause != null ? withCause : same;
        if (found == null) {
            throw invalid("fallback method '" + name + "' not found in " + targetClass.getName() + ": it must take "
                    + Arrays.toString(params) + ", optionally followed by a LockException parameter");
        }
        Class<?> returns = method.getReturnType();
        if (returns != void.class && !ClassUtils.isAssignable(returns, found.getReturnType())) {
            throw invalid("fallback method '" + name + "' returns "
                    + found.getReturnType().getName() + ", which is not assignable to " + returns.getName());
        }
        ReflectionUtils.makeAccessible(found);
        return found;
    }

    String label() {
        return label;
    }

    Kind kind() {
        return kind;
    }

    NotAcquired ifNotAcquired() {
        return ifNotAcquired;
    }

    /** The wait of this method, or the default when the annotation gives none. */
    /**
     * How much longer a lease must stay held when the method has ended: what is left of {@code minHold}
     * since the grant.
     *
     * @param lease the method's lease
     * @return zero when no minimum hold is set or it has passed
     */
    Duration keepAfterReturn(Lease lease) {
        if (minHold == null) {
            return Duration.ZERO;
        }
        Duration left = minHold.minus(lease.heldFor());
        return left.isNegative() ? Duration.ZERO : left;
    }

    Duration waitTime(Duration defaultWait) {
        return waitTime != null ? waitTime : defaultWait;
    }

    /**
     * Evaluates the keys for one call.
     *
     * @throws IllegalArgumentException when a key evaluates to nothing, or to several names (a
     *     multi-lock) under a mode other than EXCLUSIVE
     */
    LockKeys.Names names(Object target, Object[] args) {
        LockKeys.Names names = keys.names(target, args);
        if (names.multi() && mode != LockMode.EXCLUSIVE) {
            throw new IllegalArgumentException(label + ": key \"" + keys.first() + "\" gave several names "
                    + names.names() + ", which make a multi-lock, but mode is " + mode);
        }
        return names;
    }

    /** The lock to take for one call's names. */
    DistributedLock lock(LockClient client, LockKeys.Names names) {
        DistributedLock lock;
        if (names.multi()) {
            lock = client.multiLock(names.names());
        } else {
            String name = names.names().get(0);
            lock = switch (mode) {
                case EXCLUSIVE -> client.lock(name);
                case FAIR -> client.fairLock(name);
                case READ -> client.readWriteLock(name).readLock();
                case WRITE -> client.readWriteLock(name).writeLock();
            };
        }
        return leaseTime != null ? lock.withLeaseTime(leaseTime) : lock;
    }

    /** Puts the lease into every {@link Lease} parameter. */
    void injectLease(Object[] args, Lease lease) {
        for (int index : leaseParameters) {
            args[index] = lease;
        }
    }

    /** What a skipped call returns, before adapting it to the return kind. */
    Object skipped() {
        return method.getReturnType() == Optional.class ? Optional.empty() : null;
    }

    /**
     * Calls the fallback method on the target with the call's arguments.
     *
     * @param cause why the lock was not had
     * @throws Throwable whatever the fallback throws
     */
    Object callFallback(Object target, Object[] args, LockException cause) throws Throwable {
        Object[] fallbackArgs = Arrays.copyOf(args, fallbackTakesCause ? args.length + 1 : args.length);
        for (int index : leaseParameters) {
            fallbackArgs[index] = null;
        }
        if (fallbackTakesCause) {
            fallbackArgs[args.length] = cause;
        }
        try {
            return fallback.invoke(Modifier.isStatic(fallback.getModifiers()) ? null : target, fallbackArgs);
        } catch (InvocationTargetException e) {
            throw e.getCause();
        }
    }
}
