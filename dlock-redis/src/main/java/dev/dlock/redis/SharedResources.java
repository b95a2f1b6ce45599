package dev.dlock.redis;

import io.lettuce.core.resource.ClientResources;
import io.lettuce.core.resource.DefaultClientResources;
import io.lettuce.core.resource.Delay;
import java.time.Duration;
import java.util.concurrent.ExecutionException;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.TimeoutException;
import java.util.concurrent.locks.ReentrantLock;

/**
 * One set of Lettuce thread pools (event loops, timer) shared by every backend opened from a URI in
 * this JVM, created by the first and shut down when the last one closes, so that many lock clients do
 * not each start their own pools and a closed client leaves no thread behind.
 *
 * <p>Reconnects back off exponentially from 10 ms up to 1 s, so a client notices a returning server
 * within about a second.
 *
 * <p>Concurrency: the reference count changes under a lock; shutdown runs outside it.
 *
 * <p>Failure modes: a shutdown that does not finish within the timeout is left to finish in the
 * background.
 */
final class SharedResources {
    private static final ReentrantLock LOCK = new ReentrantLock();
    private static ClientResources resources;
    private static int users;

    private SharedResources() {}

    static ClientResources acquire() {
        LOCK.lock();
        try {
            if (resources == null) {
                resources = DefaultClientResources.builder()
                        .reconnectDelay(Delay.exponential(
                                Duration.ofMillis(10), Duration.ofSeconds(1), 2, TimeUnit.MILLISECONDS))
                        .build();
            }
            users++;
            return resources;
        } finally {
            LOCK.unlock();
        }
    }

    static void release(Duration timeout) {
        ClientResources last;
        LOCK.lock();
        try {
            if (--users > 0) {
                return;
            }
            last = resources;
            resources = null;
        } finally {
            LOCK.unlock();
        }
        try {
            last.shutdown(0, timeout.toMillis(), TimeUnit.MILLISECONDS).get(timeout.toNanos(), TimeUnit.NANOSECONDS);
        } catch (InterruptedException e) {
            Thread.currentThread().interrupt();
        } catch (ExecutionException | TimeoutException e) {
            // Left to finish in the background.
        }
    }
}
