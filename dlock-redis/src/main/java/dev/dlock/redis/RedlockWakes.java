package dev.dlock.redis;

import dev.dlock.spi.LockBackend.Subscription;
import dev.dlock.spi.LockKey;
import dev.dlock.spi.WakeListener;
import java.util.ArrayList;
import java.util.List;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.CompletionStage;
import java.util.concurrent.ThreadLocalRandom;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.atomic.AtomicBoolean;

/**
 * Redlock's wake-up subscriptions: one per master, held together as one subscription.
 *
 * <p>Design: the subscription counts once a majority of masters subscribed (a release on a majority is
 * seen); a master that subscribes after the round was decided, or after the whole was cancelled, is
 * cancelled too. Every master publishes a release it sees, so the first wake-up of a burst wakes the
 * engine after a random delay of up to {@value #JITTER_MILLIS} ms: waiting clients do not all retry at the
 * same instant and split the masters' votes between them.
 *
 * <p>Concurrency: the live subscriptions are guarded by their list's monitor; wake-ups run on a delay
 * scheduler thread.
 *
 * <p>Failure modes: fewer than a majority subscribed fails the stage with the masters' answers, after
 * cancelling those that did subscribe.
 */
final class RedlockWakes {
    private static final long JITTER_MILLIS = 3;

    private RedlockWakes() {}

    /** Subscribes {@code listener} to {@code key}'s wake-ups on every master; counts once a majority did. */
    static CompletionStage<Subscription> subscribe(
            List<RedlockMaster> masters,
            List<String> names,
            int quorum,
            long timeoutMillis,
            LockKey key,
            WakeListener listener) {
        WakeListener jittered = jittered(listener);
        List<Subscription> live = new ArrayList<>();
        AtomicBoolean cancelled = new AtomicBoolean();
        Subscription all = () -> {
            List<Subscription> copy;
            synchronized (live) {
                cancelled.set(true);
                copy = new ArrayList<>(live);
                live.clear();
            }
            copy.forEach(Subscription::cancel);
        };
        Round<Subscription> round = Round.send(names, quorum, timeoutMillis, i -> masters.get(i)
                .call(backend -> backend.subscribe(key, jittered))
                .thenApply(subscription -> {
                    // Also for a subscription that completes after its timeout: cancelled with the rest.
                    boolean keep;
                    synchronized (live) {
                        keep = !cancelled.get();
                        if (keep) {
                            live.add(subscription);
                        }
                    }
                    if (!keep) {
                        subscription.cancel();
                    }
                    return subscription;
                }));
        return round.decided().thenApply(outcome -> {
            if (outcome != Round.Outcome.QUORUM) {
                all.cancel();
                throw round.unreachable("subscribe to '" + key.name() + "'");
            }
            return all;
        });
    }

    private static WakeListener jittered(WakeListener listener) {
        AtomicBoolean pending = new AtomicBoolean();
        return next -> {
            if (pending.compareAndSet(false, true)) {
                long delay = ThreadLocalRandom.current().nextLong(JITTER_MILLIS + 1);
                CompletableFuture.delayedExecutor(delay, TimeUnit.MILLISECONDS).execute(() -> {
                    pending.set(false);
                    listener.wake(next);
                });
            }
        };
    }
}
