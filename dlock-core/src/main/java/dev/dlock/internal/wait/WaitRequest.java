package dev.dlock.internal.wait;

import dev.dlock.internal.lease.Terms;
import dev.dlock.spi.AcquireRequest;
import dev.dlock.spi.AcquireResult;
import java.util.concurrent.TimeUnit;
import java.util.function.Supplier;

/**
 * What one {@link Acquisition} sends the store on every attempt, and when it asks again at the latest.
 *
 * <p>Owner ids: a message the engine gave up on must never act on a later grant (a give-back or a
 * release that is slow on its way reaches the store after the store granted the retry). The store tells
 * holds apart by owner id, so an attempt that follows a give-back asks with a fresh owner id ({@link
 * #drawFreshOwner}): whatever the old id's messages do later matches nothing. Nothing else sends an owner
 * id again after a call whose outcome is unknown: a failed acquire ends the wait, a busy answer granted
 * nothing, and a lease keeps the one owner id of its grant (renewals, releases, passes between local
 * callers). A fresh id is drawn only on that retry, so the usual paths cost nothing; a fair or
 * queued-write wait that retries so joins the store queue again at its end.
 *
 * <p>Concurrency: the request is replaced only by the wait's own retry; readers see it through a
 * volatile field.
 */
final class WaitRequest {
    private final Terms terms;
    /** Draws a new owner id ({@link Acquisitions}). */
    private final Supplier<String> owners;
    /** Sent on every attempt; replaced, with a fresh owner id, only after a give-back. */
    private volatile AcquireRequest request;

    /** The request of a wait of {@code waitNanos} (0: one attempt, which never queues in the store). */
    WaitRequest(Terms terms, Supplier<String> owners, long waitNanos, String downgradeFrom) {
        this.terms = terms;
        this.owners = owners;
        long queueMillis = waitNanos == 0 ? 0 : Math.max(1, terms.leaseMillis());
        this.request = new AcquireRequest(
                terms.key(), owners.get(), terms.leaseMillis(), terms.permits(), queueMillis, downgradeFrom);
    }

    /** The request the next attempt sends. */
    AcquireRequest current() {
        return request;
    }

    /** After a give-back: the same request under a fresh owner id. */
    void drawFreshOwner() {
        AcquireRequest old = request;
        request = new AcquireRequest(
                old.key(), owners.get(), old.leaseMillis(), old.permits(), old.queueMillis(), old.downgradeFrom());
    }

    /**
     * How long a paused head waits for a wake-up before it asks again, at most until its deadline.
     *
     * @param answer the store's busy answer
     * @param now when it arrived
     * @param deadlineNanos the wait's deadline
     */
    long retryDelayNanos(AcquireResult answer, long now, long deadlineNanos) {
        long delay = deadlineNanos - now;
        // Safety net against a lost wake-up: retry when the blocking hold or queue entry would expire at
        // the latest, or after one lease time when the store cannot tell.
        long retryMillis = answer.retryAfterMillis() >= 0 ? answer.retryAfterMillis() + 1 : terms.leaseMillis();
        delay = Math.min(delay, TimeUnit.MILLISECONDS.toNanos(retryMillis));
        if (request.waiting() && terms.key().mode().queuesWhileWaiting()) {
            // A fair or write queue entry expires after the lease time unless refreshed by a new attempt.
            delay = Math.min(delay, TimeUnit.MILLISECONDS.toNanos(terms.leaseMillis()) / 3);
        }
        return Math.max(delay, 0);
    }
}
