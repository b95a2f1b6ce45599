package dev.dlock.spring;

import dev.dlock.DistributedLock;
import dev.dlock.Lease;
import dev.dlock.LeaseLostException;
import dev.dlock.LockBackendException;
import dev.dlock.LockClient;
import dev.dlock.LockException;
import dev.dlock.LockRejectedException;
import dev.dlock.LockTimeoutException;
import java.lang.reflect.Method;
import java.time.Duration;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.CompletionException;
import java.util.concurrent.CompletionStage;
import java.util.concurrent.ExecutorService;
import java.util.concurrent.LinkedBlockingQueue;
import java.util.concurrent.RejectedExecutionException;
import java.util.concurrent.ThreadPoolExecutor;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.atomic.AtomicInteger;
import java.util.function.Supplier;
import org.aopalliance.intercept.MethodInterceptor;
import org.aopalliance.intercept.MethodInvocation;
import org.apache.commons.logging.Log;
import org.apache.commons.logging.LogFactory;
import org.springframework.aop.ProxyMethodInvocation;
import org.springframework.aop.interceptor.ExposeInvocationInterceptor;
import org.springframework.aop.support.AopUtils;
import org.springframework.beans.factory.ObjectProvider;

/**
 * Runs a {@link WithLock} method while holding its lock.
 *
 * <p>Synchronous methods take the thread-owned {@link java.util.concurrent.locks.Lock} view ({@code
 * tryLock} with the wait time, {@code unlock} in {@code finally}, {@code unlockAfter} what is left of a
 * {@code minHold}), which makes nested calls on one thread reentrant. {@code CompletableFuture}/{@code CompletionStage} methods acquire with {@code acquireAsync},
 * call the rest of the advice chain and the method on the thread that completed the acquisition, and release
 * when the returned stage completes; Reactor methods do the same through {@link ReactorLocking}. A key that
 * fails to evaluate fails the returned future or publisher of an asynchronous method rather than the call.
 *
 * <p>Concurrency: stateless per call. Leases of asynchronous methods are closed on a small pool of daemon
 * threads ({@code dlock-release-N}) because closing waits for the store's answer, and the thread that
 * completes a user's future must not be blocked; the returned future completes after the release.
 *
 * <p>Failure modes: no lock, no call, unless the plan's policy says skip or fallback (only for a timeout
 * or a rejection; a store failure always fails the call). A lease lost while the method ran fails the
 * call with {@link LeaseLostException} after the method returned. A release that fails only logs: the
 * work was protected to its end and the store frees the lock when the lease runs out.
 */
final class WithLockInterceptor implements MethodInterceptor {
    private static final Log log = LogFactory.getLog(WithLockInterceptor.class);
    private static final Duration FALLBACK_WAIT = Duration.ofSeconds(30);

    /** Finds the plan of a called method. */
    @FunctionalInterface
    interface Plans {
        LockPlan plan(Method method, Class<?> targetClass);
    }

    private final Plans plans;
    private final ObjectProvider<LockClient> client;
    private final ObjectProvider<DlockProperties> properties;
    private final ExecutorService releases;

    WithLockInterceptor(Plans plans, ObjectProvider<LockClient> client, ObjectProvider<DlockProperties> properties) {
        this.plans = plans;
        this.client = client;
        this.properties = properties;
        AtomicInteger threads = new AtomicInteger();
        ThreadPoolExecutor pool = new ThreadPoolExecutor(4, 4, 30, TimeUnit.SECONDS, new LinkedBlockingQueue<>(), r -> {
            Thread t = new Thread(r, "dlock-release-" + threads.incrementAndGet());
            t.setDaemon(true);
            return t;
        });
        pool.allowCoreThreadTimeOut(true);
        this.releases = pool;
    }

    @Override
    public Object invoke(MethodInvocation invocation) throws Throwable {
        Object target = invocation.getThis();
        Class<?> targetClass = target != null
                ? AopUtils.getTargetClass(target)
                : invocation.getMethod().getDeclaringClass();
        LockPlan plan = plans.plan(invocation.getMethod(), targetClass);
        if (plan == null) {
            return invocation.proceed();
        }
        if (plan.kind() == LockPlan.Kind.SYNC) {
            return callHolding(plan, lockOf(plan, target, invocation), plan.waitTime(defaultWait()), invocation);
        }
        // An asynchronous method reports every failure through what it returns, a bad key included.
        DistributedLock lock;
        Duration wait;
        ProxyMethodInvocation calls;
        try {
            lock = lockOf(plan, target, invocation);
            wait = plan.waitTime(defaultWait());
            calls = proxied(invocation, plan);
        } catch (RuntimeException e) {
            return plan.kind() == LockPlan.Kind.FUTURE
                    ? CompletableFuture.failedFuture(e)
                    : ReactorLocking.failed(plan.kind(), e);
        }
        return switch (plan.kind()) {
            case MONO -> ReactorLocking.mono(this, plan, lock, wait, calls);
            case FLUX -> ReactorLocking.flux(this, plan, lock, wait, calls);
            default -> callAsync(plan, lock, wait, calls);
        };
    }

    private DistributedLock lockOf(LockPlan plan, Object target, MethodInvocation invocation) {
        return plan.lock(client.getObject(), plan.names(target, invocation.getArguments()));
    }

    private static ProxyMethodInvocation proxied(MethodInvocation invocation, LockPlan plan) {
        if (invocation instanceof ProxyMethodInvocation proxied) {
            return proxied;
        }
        throw new IllegalStateException(plan.label() + ": an asynchronous @WithLock method must be called through a"
                + " Spring AOP proxy, got a " + invocation.getClass().getName());
    }

    /**
     * Runs the rest of the advice chain and the method once, on the calling thread, whichever thread that is.
     *
     * <p>Each run proceeds on its own copy of the invocation, so a {@code Mono} subscribed again (a retry)
     * passes every later advice again; a used invocation would go straight to the method. The copy is
     * exposed through {@link ExposeInvocationInterceptor} while it proceeds, as AspectJ advice further down
     * the chain looks it up there, and this thread may not be the one the proxy was called on.
     *
     * @param invocation the invocation this interceptor received, not proceeded
     * @param plan the method's plan
     * @param lease the lease, handed to a {@link Lease} parameter
     * @return what the method returned
     */
    static Object proceedOnce(ProxyMethodInvocation invocation, LockPlan plan, Lease lease) throws Throwable {
        MethodInvocation copy = invocation.invocableClone();
        plan.injectLease(copy.getArguments(), lease);
        return ExposeInvocationInterceptor.INSTANCE.invoke(copy);
    }

    private Duration defaultWait() {
        DlockProperties props = properties.getIfAvailable();
        return props != null ? props.getWaitTime() : FALLBACK_WAIT;
    }

    // ---- synchronous methods

    private Object callHolding(LockPlan plan, DistributedLock lock, Duration wait, MethodInvocation invocation)
            throws Throwable {
        boolean held;
        try {
            held = lock.tryLock(TimeUnit.NANOSECONDS.convert(wait), TimeUnit.NANOSECONDS);
        } catch (InterruptedException e) {
            Thread.currentThread().interrupt();
            throw new LockException(plan.label() + ": interrupted while waiting for '" + lock.name() + "'", e);
        } catch (LockRejectedException e) {
            return notAcquired(plan, invocation, e);
        }
        if (!held) {
            return notAcquired(
                    plan,
                    invocation,
                    new LockTimeoutException(
                            "could not acquire '" + lock.name() + "' within " + wait + " for " + plan.label()));
        }
        Lease lease = lock.currentLease().orElseThrow();
        Object result;
        try {
            plan.injectLease(invocation.getArguments(), lease);
            result = invocation.proceed();
        } catch (Throwable failure) {
            try {
                lock.unlockAfter(plan.keepAfterReturn(lease));
            } catch (RuntimeException unlockFailure) {
                failure.addSuppressed(unlockFailure);
            }
            throw failure;
        }
        // Lost, or past its local deadline before the watchdog noticed: either way not protected to the end.
        LeaseLostException lost = lostWhileRunning(lease, plan);
        try {
            lock.unlockAfter(plan.keepAfterReturn(lease));
        } catch (LeaseLostException e) {
            throw lost != null ? lost : e;
        } catch (LockBackendException e) {
            log.warn(plan.label() + ": could not release '" + lock.name() + "'; the store frees it when its lease"
                    + " runs out: " + e.getMessage());
        }
        if (lost != null) {
            throw lost;
        }
        return result;
    }

    private static Object notAcquired(LockPlan plan, MethodInvocation invocation, LockException cause)
            throws Throwable {
        return switch (plan.ifNotAcquired()) {
            case THROW -> throw cause;
            case SKIP -> plan.skipped();
            case FALLBACK -> plan.callFallback(invocation.getThis(), invocation.getArguments(), cause);
        };
    }

    // ---- CompletableFuture and CompletionStage methods

    private Object callAsync(LockPlan plan, DistributedLock lock, Duration wait, ProxyMethodInvocation invocation) {
        CompletableFuture<Object> result = new CompletableFuture<>();
        CompletableFuture<Lease> acquisition;
        try {
            acquisition = lock.acquireAsync(wait);
        } catch (RuntimeException e) {
            return CompletableFuture.failedFuture(e);
        }
        // Cancelling the result before the lock is held stops the wait; afterwards the lock stays held
        // until the method's own future completes, as its work may still be running.
        result.whenComplete((value, error) -> {
            if (result.isCancelled()) {
                acquisition.cancel(false);
            }
        });
        acquisition.whenComplete((lease, error) -> {
            if (error != null) {
                asyncNotAcquired(plan, invocation, unwrap(error), result);
            } else if (result.isDone()) {
                release(lease, plan);
            } else {
                runAsync(plan, invocation, lease, result);
            }
        });
        return result;
    }

    private void runAsync(
            LockPlan plan, ProxyMethodInvocation invocation, Lease lease, CompletableFuture<Object> result) {
        CompletionStage<?> stage;
        try {
            stage = (CompletionStage<?>) proceedOnce(invocation, plan, lease);
        } catch (Throwable failure) {
            release(lease, plan).whenComplete((lost, ignored) -> result.completeExceptionally(with(failure, lost)));
            return;
        }
        if (stage == null) {
            stage = CompletableFuture.completedFuture(null);
        }
        stage.whenComplete((value, failure) -> release(lease, plan).whenComplete((lost, ignored) -> {
            if (failure != null) {
                result.completeExceptionally(with(unwrap(failure), lost));
            } else if (lost != null) {
                result.completeExceptionally(lost);
            } else {
                result.complete(value);
            }
        }));
    }

    private static void asyncNotAcquired(
            LockPlan plan, MethodInvocation invocation, Throwable cause, CompletableFuture<Object> result) {
        if (!isNotAcquired(cause)) {
            result.completeExceptionally(cause);
            return;
        }
        switch (plan.ifNotAcquired()) {
            case THROW -> result.completeExceptionally(cause);
            case SKIP -> result.complete(plan.skipped());
            case FALLBACK -> {
                try {
                    CompletionStage<?> fallback = (CompletionStage<?>)
                            plan.callFallback(invocation.getThis(), invocation.getArguments(), (LockException) cause);
                    if (fallback == null) {
                        result.complete(null);
                    } else {
                        fallback.whenComplete((value, error) -> {
                            if (error != null) {
                                result.completeExceptionally(unwrap(error));
                            } else {
                                result.complete(value);
                            }
                        });
                    }
                } catch (Throwable t) {
                    result.completeExceptionally(t);
                }
            }
        }
    }

    // ---- shared by the asynchronous paths

    /** True for the failures a policy handles: the wait ran out, or the local queue was full. */
    static boolean isNotAcquired(Throwable cause) {
        return cause instanceof LockTimeoutException || cause instanceof LockRejectedException;
    }

    static Throwable unwrap(Throwable error) {
        return error instanceof CompletionException && error.getCause() != null ? error.getCause() : error;
    }

    private static Throwable with(Throwable failure, LeaseLostException lost) {
        if (lost != null) {
            failure.addSuppressed(lost);
        }
        return failure;
    }

    /**
     * Releases a lease off the caller's thread; with a minimum hold not yet passed, leaves it to the
     * engine to release then ({@link Lease#closeAfter}).
     *
     * @return completes with the loss, when the lease was lost before the release, or null
     */
    CompletableFuture<LeaseLostException> release(Lease lease, LockPlan plan) {
        Supplier<LeaseLostException> close = () -> {
            LeaseLostException lost = lostWhileRunning(lease, plan);
            try {
                lease.closeAfter(plan.keepAfterReturn(lease));
            } catch (LockBackendException e) {
                log.warn(plan.label() + ": could not release '" + lease.name()
                        + "'; the store frees it when its lease runs out: " + e.getMessage());
            }
            return lost;
        };
        try {
            return CompletableFuture.supplyAsync(close, releases);
        } catch (RejectedExecutionException shuttingDown) {
            return CompletableFuture.completedFuture(close.get());
        }
    }

    /** The loss to report when the lease is no longer valid, or null. */
    private static LeaseLostException lostWhileRunning(Lease lease, LockPlan plan) {
        try {
            lease.checkValid();
            return null;
        } catch (LeaseLostException e) {
            return new LeaseLostException(plan.label() + ": the lock was lost while the method ran: " + e.getMessage());
        }
    }

    void shutdown() {
        releases.shutdown();
    }
}
