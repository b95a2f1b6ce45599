package dev.dlock.spring;

import dev.dlock.Lease;
import dev.dlock.LockException;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.CompletionStage;
import java.util.concurrent.atomic.AtomicInteger;
import java.util.function.Function;

/** {@link WithLock} methods returning {@code CompletableFuture} and {@code CompletionStage}. */
public class AsyncLockedService {
    private final AtomicInteger inside = new AtomicInteger();
    private final AtomicInteger maxInside = new AtomicInteger();
    private volatile int counter;

    public int counter() {
        return counter;
    }

    /** The most callers that were inside at once (read through the proxy, which has no state). */
    public int maxInside() {
        return maxInside.get();
    }

    /** The read-modify-write of {@link LockedService#increment}, done on another thread. */
    @WithLock(key = "'acounter:' + #name", waitTime = "30s")
    public CompletableFuture<Integer> increment(String name) {
        return CompletableFuture.supplyAsync(() -> {
            int now = inside.incrementAndGet();
            maxInside.accumulateAndGet(now, Math::max);
            int read = counter;
            Thread.yield();
            counter = read + 1;
            inside.decrementAndGet();
            return read + 1;
        });
    }

    /** Runs {@code body} with the lease once the lock is held; the lock is held until its future completes. */
    @WithLock(key = "'job:' + #id", waitTime = "5s")
    public CompletableFuture<String> run(String id, Lease lease, Function<Lease, CompletableFuture<String>> body) {
        return body.apply(lease);
    }

    @WithLock(key = "'job:' + #id", waitTime = "200ms")
    public CompletionStage<String> runOrThrow(String id, Lease lease, Function<Lease, CompletableFuture<String>> body) {
        return body.apply(lease);
    }

    @WithLock(key = "'job:' + #id", waitTime = "200ms", ifNotAcquired = NotAcquired.SKIP)
    public CompletableFuture<String> runOrSkip(
            String id, Lease lease, Function<Lease, CompletableFuture<String>> body) {
        return body.apply(lease);
    }

    @WithLock(key = "'job:' + #id", waitTime = "200ms", ifNotAcquired = NotAcquired.FALLBACK, fallback = "busy")
    public CompletableFuture<String> runOrFallback(
            String id, Lease lease, Function<Lease, CompletableFuture<String>> body) {
        return body.apply(lease);
    }

    CompletableFuture<String> busy(
            String id, Lease lease, Function<Lease, CompletableFuture<String>> body, LockException cause) {
        return CompletableFuture.completedFuture(
                "busy:" + id + ":" + (lease == null) + ":" + cause.getClass().getSimpleName());
    }
}
