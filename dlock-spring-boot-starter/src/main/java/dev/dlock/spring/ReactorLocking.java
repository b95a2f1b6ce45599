package dev.dlock.spring;

import dev.dlock.DistributedLock;
import dev.dlock.Lease;
import dev.dlock.LeaseLostException;
import dev.dlock.LockException;
import java.time.Duration;
import java.util.concurrent.CompletableFuture;
import org.reactivestreams.Publisher;
import org.springframework.aop.ProxyMethodInvocation;
import reactor.core.publisher.Flux;
import reactor.core.publisher.Mono;

/**
 * The Reactor side of {@link WithLockInterceptor}: a {@code Mono} or {@code Flux} method is
 * subscribed only once the lock is held, and the lease is released when it completes, fails or is
 * cancelled. Nothing happens until the returned publisher is subscribed, and each subscription (a retry,
 * a repeat) takes the lock anew and runs the rest of the advice chain and the method on its own copy of the
 * invocation ({@link WithLockInterceptor#proceedOnce}). Loaded only when reactor-core is on the class path.
 *
 * <p>Concurrency: the acquisition is non-blocking ({@code acquireAsync}); the method's publisher is
 * subscribed on the thread that completed the acquisition; leases are closed on the interceptor's release
 * threads.
 *
 * <p>Failure modes: a subscription cancelled while waiting cancels the wait, and a grant that races with
 * the cancel is released. A lease lost while the publisher ran ends it with {@link LeaseLostException}.
 */
final class ReactorLocking {
    private ReactorLocking() {}

    /** The outcome of an acquisition: a lease, or why there is none. */
    private record Attempt(Lease lease, LockException notAcquired) {}

    static Object mono(
            WithLockInterceptor interceptor,
            LockPlan plan,
            DistributedLock lock,
            Duration wait,
            ProxyMethodInvocation invocation) {
        return acquire(interceptor, plan, lock, wait).flatMap(attempt -> {
            if (attempt.lease() == null) {
                return Mono.from(notAcquired(plan, invocation, attempt.notAcquired()));
            }
            return Mono.usingWhen(
                    Mono.just(attempt.lease()),
                    lease -> Mono.from(body(plan, invocation, lease)),
                    lease -> releaseFailingIfLost(interceptor, plan, lease),
                    (lease, error) -> releaseAddingLoss(interceptor, plan, lease, error),
                    lease -> release(interceptor, plan, lease).then());
        });
    }

    static Object flux(
            WithLockInterceptor interceptor,
            LockPlan plan,
            DistributedLock lock,
            Duration wait,
            ProxyMethodInvocation invocation) {
        return acquire(interceptor, plan, lock, wait).flatMapMany(attempt -> {
            if (attempt.lease() == null) {
                return Flux.from(notAcquired(plan, invocation, attempt.notAcquired()));
            }
            return Flux.usingWhen(
                    Mono.just(attempt.lease()),
                    lease -> body(plan, invocation, lease),
                    lease -> releaseFailingIfLost(interceptor, plan, lease),
                    (lease, error) -> releaseAddingLoss(interceptor, plan, lease, error),
                    lease -> release(interceptor, plan, lease).then());
        });
    }

    private static Mono<Attempt> acquire(
            WithLockInterceptor interceptor, LockPlan plan, DistributedLock lock, Duration wait) {
        return Mono.create(sink -> {
            CompletableFuture<Lease> acquisition;
            try {
                acquisition = lock.acquireAsync(wait);
            } catch (RuntimeException e) {
                sink.error(e);
                return;
            }
            sink.onCancel(() -> {
                if (!acquisition.cancel(false)) {
                    // Granted just as the subscriber left: nobody will use this lease.
                    acquisition.thenAccept(lease -> interceptor.release(lease, plan));
                }
            });
            acquisition.whenComplete((lease, error) -> {
                if (error == null) {
                    sink.success(new Attempt(lease, null));
                    return;
                }
                Throwable cause = WithLockInterceptor.unwrap(error);
                if (WithLockInterceptor.isNotAcquired(cause)) {
                    sink.success(new Attempt(null, (LockException) cause));
                } else {
                    sink.error(cause);
                }
            });
        });
    }

    /** A publisher of the method's kind that fails with {@code e} when subscribed. */
    static Publisher<Object> failed(LockPlan.Kind kind, RuntimeException e) {
        return kind == LockPlan.Kind.FLUX ? Flux.error(e) : Mono.error(e);
    }

    @SuppressWarnings("unchecked")
    private static Publisher<Object> body(LockPlan plan, ProxyMethodInvocation invocation, Lease lease) {
        try {
            Publisher<Object> publisher = (Publisher<Object>) WithLockInterceptor.proceedOnce(invocation, plan, lease);
            return publisher != null ? publisher : Mono.empty();
        } catch (Throwable t) {
            return Mono.error(t);
        }
    }

    @SuppressWarnings("unchecked")
    private static Publisher<Object> notAcquired(LockPlan plan, ProxyMethodInvocation invocation, LockException cause) {
        return switch (plan.ifNotAcquired()) {
            case THROW -> Mono.error(cause);
            case SKIP -> Mono.empty();
            case FALLBACK -> {
                try {
                    Publisher<Object> fallback = (Publisher<Object>)
                            plan.callFallback(invocation.getThis(), invocation.getArguments(), cause);
                    yield fallback != null ? fallback : Mono.empty();
                } catch (Throwable t) {
                    yield Mono.error(t);
                }
            }
        };
    }

    private static Mono<LeaseLostException> release(WithLockInterceptor interceptor, LockPlan plan, Lease lease) {
        return Mono.fromFuture(() -> interceptor.release(lease, plan));
    }

    private static Mono<Void> releaseFailingIfLost(WithLockInterceptor interceptor, LockPlan plan, Lease lease) {
        return release(interceptor, plan, lease).flatMap(Mono::error);
    }

    private static Mono<Void> releaseAddingLoss(
            WithLockInterceptor interceptor, LockPlan plan, Lease lease, Throwable error) {
        return release(interceptor, plan, lease).doOnNext(error::addSuppressed).then();
    }
}
