package dev.dlock.spring;

import dev.dlock.Lease;
import dev.dlock.LockException;
import java.time.Duration;
import java.util.List;
import java.util.Optional;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.atomic.AtomicInteger;
import java.util.function.Supplier;
import org.springframework.beans.factory.ObjectProvider;

/** Synchronous methods under {@link WithLock}, one per feature under test. */
public class LockedService {
    private final ObjectProvider<LockedService> self;

    /** Callers inside {@link #increment} right now, and the most there ever were. */
    private final AtomicInteger inside = new AtomicInteger();

    private final AtomicInteger maxInside = new AtomicInteger();
    private volatile int counter;

    public LockedService(ObjectProvider<LockedService> self) {
        this.self = self;
    }

    public int counter() {
        return counter;
    }

    /** The most callers that were inside at once (read through the proxy, which has no state). */
    public int maxInside() {
        return maxInside.get();
    }

    /** A read-modify-write that loses updates unless calls are serialised. */
    @WithLock(key = "'counter:' + #name", waitTime = "30s")
    public void increment(String name) {
        int now = inside.incrementAndGet();
        maxInside.accumulateAndGet(now, Math::max);
        int read = counter;
        Thread.yield();
        counter = read + 1;
        inside.decrementAndGet();
    }

    @WithLock(key = "'order:' + #orderId", waitTime = "0")
    public String ship(long orderId, Supplier<String> body) {
        return body.get();
    }

    @WithLock(key = "'order:' + #orderId", waitTime = "300ms")
    public String shipWaiting(long orderId, Supplier<String> body) {
        return body.get();
    }

    @WithLock(key = "'order:' + #orderId", waitTime = "10s")
    public String shipPatiently(long orderId, Supplier<String> body) {
        return body.get();
    }

    @WithLock(key = "'order:' + #orderId", waitTime = "0", ifNotAcquired = NotAcquired.SKIP)
    public String shipOrSkip(long orderId, Supplier<String> body) {
        return body.get();
    }

    @WithLock(key = "'order:' + #orderId", waitTime = "0", ifNotAcquired = NotAcquired.SKIP)
    public Optional<String> shipOptionalOrSkip(long orderId, Supplier<String> body) {
        return Optional.of(body.get());
    }

    /** A scheduled job's shape: skipped when another node runs it, and held at least 2 s from its start. */
    @WithLock(key = "'job:' + #jobId", waitTime = "0", ifNotAcquired = NotAcquired.SKIP, minHold = "2s")
    public String runJobOrSkip(long jobId, Supplier<String> body) {
        return body.get();
    }

    @WithLock(key = "'order:' + #orderId", waitTime = "0", ifNotAcquired = NotAcquired.SKIP)
    public void touchOrSkip(long orderId, Runnable body) {
        body.run();
    }

    @WithLock(key = "'order:' + #orderId", waitTime = "0", ifNotAcquired = NotAcquired.FALLBACK, fallback = "busy")
    public String shipOrFallback(long orderId, Supplier<String> body) {
        return body.get();
    }

    String busy(long orderId, Supplier<String> body, LockException cause) {
        return "busy:" + orderId + ":" + cause.getClass().getSimpleName();
    }

    @WithLock(key = "'order:' + #orderId", waitTime = "0")
    public long token(long orderId, Lease lease) {
        return lease.fencingToken();
    }

    @WithLock(key = "'order:' + #orderId", waitTime = "0")
    public long tokenWhile(long orderId, Lease lease, Runnable body) {
        body.run();
        return lease.fencingToken();
    }

    @WithLock(
            key = {"'acct:' + #from", "'acct:' + #to"},
            waitTime = "0")
    public List<String> transfer(String from, String to, Lease lease) {
        return lease.parts().stream().map(Lease::name).toList();
    }

    @WithLock(key = "#ids.![ 'item:' + #this ]", waitTime = "0")
    public List<String> lockAll(List<Integer> ids, Lease lease) {
        return lease.parts().stream().map(Lease::name).toList();
    }

    @WithLock(key = "#root.methodName + ':' + #p0 + ':' + @lockKeys.suffix()", waitTime = "0")
    public String rootAndBean(String id, Lease lease) {
        return lease.name();
    }

    @WithLock(key = "'doc:' + #id", mode = LockMode.READ, waitTime = "0")
    public String read(String id, Supplier<String> body) {
        return body.get();
    }

    @WithLock(key = "'doc:' + #id", mode = LockMode.WRITE, waitTime = "0")
    public String write(String id, Supplier<String> body) {
        return body.get();
    }

    @WithLock(key = "'fair:' + #id", mode = LockMode.FAIR, waitTime = "5s")
    public String fair(String id, Supplier<String> body) {
        return body.get();
    }

    @WithLock(key = "'nested:' + #id", waitTime = "0")
    public String outer(String id) {
        return "outer>" + self.getObject().inner(id);
    }

    @WithLock(key = "'nested:' + #id", waitTime = "0")
    public String inner(String id) {
        return "inner";
    }

    @WithLock(key = "'lease:' + #id", leaseTime = "${test.annotation-lease:2s}")
    public Duration remaining(String id, Lease lease) {
        return lease.remaining();
    }

    @WithLock(key = "'lost:' + #id", waitTime = "0")
    public String holdUntilLost(String id, Lease lease, Runnable cutOff) throws Exception {
        cutOff.run();
        lease.whenLost().get(20, TimeUnit.SECONDS);
        return "finished";
    }
}
