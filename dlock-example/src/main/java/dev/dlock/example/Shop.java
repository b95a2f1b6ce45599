package dev.dlock.example;

import dev.dlock.Lease;
import dev.dlock.LockException;
import dev.dlock.spring.LockMode;
import dev.dlock.spring.NotAcquired;
import dev.dlock.spring.WithLock;
import java.util.Map;
import java.util.concurrent.ConcurrentHashMap;
import java.util.concurrent.atomic.AtomicInteger;
import org.springframework.stereotype.Service;
import reactor.core.publisher.Mono;

/**
 * The locked work: shipping an order (one instance at a time per order, fenced by the lease's token), the
 * nightly report (one instance runs it, the others skip) and reading the catalog (readers share).
 */
@Service
public class Shop {
    private final Map<Long, Long> lastToken = new ConcurrentHashMap<>();
    private final AtomicInteger reports = new AtomicInteger();

    /** Created by Spring. */
    public Shop() {}

    /**
     * Ships an order while holding {@code order:ID}; answers at once when another call holds it.
     *
     * @param orderId the order
     * @param lease the lease, handed in by the annotation
     * @return what was done
     */
    @WithLock(key = "'order:' + #orderId", waitTime = "200ms", ifNotAcquired = NotAcquired.FALLBACK, fallback = "busy")
    public String ship(long orderId, Lease lease) {
        lastToken.merge(orderId, lease.fencingToken(), Math::max);
        return "shipped " + orderId + " (token " + lease.fencingToken() + ")";
    }

    String busy(long orderId, Lease lease, LockException why) {
        throw new OrderBusyException(orderId);
    }

    /**
     * Makes the nightly report, unless another instance is making it: then nothing happens.
     *
     * @param lease the lease, handed in by the annotation
     */
    @WithLock(key = "'report:nightly'", waitTime = "0", ifNotAcquired = NotAcquired.SKIP)
    public void nightlyReport(Lease lease) {
        reports.incrementAndGet();
    }

    /**
     * The catalog, read under the shared side of {@code catalog}; the lock is held until the Mono completes.
     *
     * @return the catalog
     */
    @WithLock(key = "'catalog'", mode = LockMode.READ)
    public Mono<String> catalog() {
        return Mono.just("catalog");
    }

    /**
     * How many reports this instance made.
     *
     * @return the count
     */
    public int reportsMade() {
        return reports.get();
    }

    /** An order another call is shipping right now; answered with 409. */
    public static final class OrderBusyException extends RuntimeException {
        private static final long serialVersionUID = 1L;

        OrderBusyException(long orderId) {
            super("order " + orderId + " is being shipped, try again");
        }
    }
}
