package dev.dlock.redis;

import static org.assertj.core.api.Assertions.assertThat;

import dev.dlock.Lease;
import dev.dlock.LockClient;
import dev.dlock.spi.LockKey;
import dev.dlock.spi.Mode;
import java.time.Duration;
import java.util.ArrayList;
import java.util.List;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.TimeUnit;
import org.junit.jupiter.api.AfterAll;
import org.junit.jupiter.api.BeforeAll;
import org.junit.jupiter.api.Test;

/** Waiting without polling: one subscription per client and name, and a fair release wakes only the head. */
class WakeUpTest {
    private static RedisServer server;

    @BeforeAll
    static void startServer() {
        server = RedisServer.start();
    }

    @AfterAll
    static void stopServer() {
        server.close();
    }

    private static long subscribers(String namespace, String name, Mode mode) {
        String channel = ResourceKeys.of(new LockKey(namespace, name, mode)).channel();
        List<?> reply = (List<?>) server.call("PUBSUB", "NUMSUB", channel);
        return (Long) reply.get(1);
    }

    @Test
    void localWaitersOfOneClientShareOneSubscription() throws Exception {
        try (LockClient holder =
                        LockClient.builder(server.uri()).namespace("subs").build();
                LockClient a =
                        LockClient.builder(server.uri()).namespace("subs").build();
                LockClient b =
                        LockClient.builder(server.uri()).namespace("subs").build()) {
            Lease held = holder.lock("shared").acquire(Duration.ofSeconds(5));
            List<CompletableFuture<Lease>> waiting = new ArrayList<>();
            for (int i = 0; i < 5; i++) {
                waiting.add(a.lock("shared").acquireAsync(Duration.ofSeconds(20)));
                waiting.add(b.lock("shared").acquireAsync(Duration.ofSeconds(20)));
            }
            RedisSentinelServers.await(
                    "both clients subscribed", () -> subscribers("subs", "shared", Mode.EXCLUSIVE) == 2);
            Thread.sleep(200);
            assertThat(subscribers("subs", "shared", Mode.EXCLUSIVE)).isEqualTo(2);
            held.close();
            // Each waiter passes the lock on as soon as it gets it.
            CompletableFuture.allOf(waiting.stream()
                            .map(w -> w.thenAccept(Lease::close))
                            .toArray(CompletableFuture[]::new))
                    .get(20, TimeUnit.SECONDS);
            // Unsubscribed after the last waiter left (the engine lingers for a second first).
            RedisSentinelServers.await("unsubscribed", () -> subscribers("subs", "shared", Mode.EXCLUSIVE) == 0);
        }
    }

    @Test
    void aFairReleaseWakesOnlyTheHeadOfTheQueue() throws Exception {
        List<LockClient> clients = new ArrayList<>();
        try {
            for (int i = 0; i < 4; i++) {
                clients.add(
                        LockClient.builder(server.uri()).namespace("fairwake").build());
            }
            Lease held = clients.get(0).fairLock("queue").acquire(Duration.ofSeconds(5));
            List<CompletableFuture<Lease>> waiting = new ArrayList<>();
            for (int i = 1; i < 4; i++) {
                waiting.add(clients.get(i).fairLock("queue").acquireAsync(Duration.ofSeconds(30)));
                int subscribed = i;
                RedisSentinelServers.await(
                        "waiter subscribed", () -> subscribers("fairwake", "queue", Mode.FAIR) == subscribed);
                Thread.sleep(100); // its attempt after subscribing has queued it
            }
            try (Monitor monitor = Monitor.start(server.port())) {
                held.close();
                Lease first = waiting.get(0).get(10, TimeUnit.SECONDS);
                monitor.sync(server.port());
                List<String> operations = new ArrayList<>();
                for (String line : monitor.commands("FCALL")) {
                    operations.add(Monitor.scriptOperation(line));
                }
                // The release, then exactly one attempt: the head's. The others were not woken.
                assertThat(operations).containsExactly("release", "acquire");
                assertThat(waiting.get(1)).isNotDone();
                assertThat(waiting.get(2)).isNotDone();
                first.close();
            }
            waiting.get(1).get(10, TimeUnit.SECONDS).close();
            waiting.get(2).get(10, TimeUnit.SECONDS).close();
        } finally {
            clients.forEach(LockClient::close);
        }
    }
}
