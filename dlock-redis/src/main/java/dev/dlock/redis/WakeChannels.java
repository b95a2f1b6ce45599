package dev.dlock.redis;

import dev.dlock.spi.LockBackend.Subscription;
import dev.dlock.spi.WakeListener;
import io.lettuce.core.pubsub.RedisPubSubAdapter;
import io.lettuce.core.pubsub.StatefulRedisPubSubConnection;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.CompletionStage;
import java.util.concurrent.ConcurrentHashMap;
import java.util.concurrent.CopyOnWriteArrayList;
import java.util.concurrent.atomic.AtomicBoolean;
import java.util.concurrent.locks.ReentrantLock;

/**
 * Wake-up subscriptions of one client, multiplexed over its single pub/sub connection: one {@code
 * SUBSCRIBE} per channel however many listeners share it, {@code UNSUBSCRIBE} when the last one leaves.
 *
 * <p>Messages: the release script publishes on the resource's channel; the payload is the owner id of
 * the new head of a fair queue, or empty when any waiter may try.
 *
 * <p>Concurrency: subscribe and unsubscribe change the channel table under one lock and send their
 * command while holding it, so the commands reach the server in the order of the table changes (an
 * UNSUBSCRIBE and a following SUBSCRIBE of the same channel cannot swap). Messages arrive on a Lettuce
 * event-loop thread and read the table without locking; listeners return at once.
 *
 * <p>Failure modes: while the connection is down, releases are missed; Lettuce subscribes again after
 * reconnecting, and that confirmation wakes every listener of the channel so that no waiter sleeps
 * through a missed release (waiters also retry at the holder's expiry by themselves). A subscription
 * that fails (server down) completes exceptionally and leaves nothing behind.
 */
final class WakeChannels extends RedisPubSubAdapter<String, String> {
    private final StatefulRedisPubSubConnection<String, String> connection;
    private final ReentrantLock lock = new ReentrantLock();
    private final ConcurrentHashMap<String, Channel> channels = new ConcurrentHashMap<>();

    private static final class Channel {
        final CopyOnWriteArrayList<WakeListener> listeners = new CopyOnWriteArrayList<>();
        /** True until the server confirmed our own SUBSCRIBE; later confirmations are re-subscriptions. */
        final AtomicBoolean awaitingConfirmation = new AtomicBoolean(true);

        /** Set under the table lock right after the channel enters the table; read under it or later. */
        CompletableFuture<Void> live;
    }

    WakeChannels(StatefulRedisPubSubConnection<String, String> connection) {
        this.connection = connection;
        connection.addListener(this);
    }

    CompletionStage<Subscription> subscribe(String name, WakeListener listener) {
        Channel channel;
        lock.lock();
        try {
            channel = channels.get(name);
            if (channel == null) {
                channel = new Channel();
                // In the table before the command is sent, so its confirmation finds the channel.
                channels.put(name, channel);
                channel.live = connection.async().subscribe(name).toCompletableFuture();
            }
            channel.listeners.add(listener);
        } finally {
            lock.unlock();
        }
        Channel joined = channel;
        return joined.live.handle((ok, error) -> {
            if (error != null) {
                remove(name, joined, listener, false);
                throw error instanceof RuntimeException e ? e : new IllegalStateException(error);
            }
            return () -> remove(name, joined, listener, true);
        });
    }

    private void remove(String name, Channel channel, WakeListener listener, boolean unsubscribe) {
        lock.lock();
        try {
            channel.listeners.remove(listener);
            if (channel.listeners.isEmpty() && channels.get(name) == channel) {
                channels.remove(name);
                if (unsubscribe && connection.isOpen()) {
                    connection.async().unsubscribe(name);
                }
            }
        } finally {
            lock.unlock();
        }
    }

    @Override
    public void message(String name, String payload) {
        Channel channel = channels.get(name);
        if (channel != null) {
            String next = payload == null || payload.isEmpty() ? null : payload;
            for (WakeListener listener : channel.listeners) {
                listener.wake(next);
            }
        }
    }

    @Override
    public void subscribed(String name, long count) {
        Channel channel = channels.get(name);
        if (channel != null && !channel.awaitingConfirmation.compareAndSet(true, false)) {
            for (WakeListener listener : channel.listeners) {
                listener.wake(null);
            }
        }
    }
}
