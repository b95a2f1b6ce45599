package dev.dlock.redis;

import static org.assertj.core.api.Assertions.assertThat;

import dev.dlock.Lease;
import dev.dlock.LockClient;
import java.time.Duration;
import java.util.HashMap;
import java.util.Map;
import java.util.Optional;
import org.junit.jupiter.api.Test;

/**
 * dlock's scripts as a Redis function library (Redis 7+): grants read the server's run id once per server
 * process instead of once per call, and that saving never skips the hold-back after a lost state, since
 * every process loads the library with a fresh state. A server or user that cannot run functions is
 * served by {@code EVAL} scripts, as before.
 */
class FunctionLibraryTest {
    private static final Duration LEASE = Duration.ofSeconds(2);
    private static final String NAMESPACE = "lib";

    private static LockClient client(String uri) {
        return LockClient.builder(uri).leaseTime(LEASE).namespace(NAMESPACE).build();
    }

    /**
     * The calls of each command since the last {@code CONFIG RESETSTAT} ({@code INFO commandstats}, which
     * counts itself only after its answer).
     */
    private static Map<String, Long> calls(RedisServer server) {
        Map<String, Long> calls = new HashMap<>();
        String stats = (String) server.call("INFO", "commandstats");
        stats.lines().filter(line -> line.startsWith("cmdstat_")).forEach(line -> {
            String command = line.substring("cmdstat_".length(), line.indexOf(':'));
            calls.put(command, figure(line, "calls="));
            calls.put(command + " rejected", figure(line, "rejected_calls="));
        });
        return calls;
    }

    private static long figure(String line, String name) {
        int start = line.indexOf(name) + name.length();
        int end = line.indexOf(',', start);
        return Long.parseLong(line.substring(start, end < 0 ? line.length() : end));
    }

    @Test
    void grantsAreFunctionCallsThatReadTheRunIdOncePerServerProcess() throws Exception {
        try (RedisServer server = RedisServer.start();
                LockClient client = client(server.plainUri())) {
            server.markFresh(NAMESPACE);
            server.call("CONFIG", "RESETSTAT");
            for (int i = 0; i < 50; i++) {
                client.lock("cycle").acquire(Duration.ofSeconds(5)).close();
            }
            Map<String, Long> calls = calls(server);
            assertThat(calls.get("fcall")).as("lock and unlock as FCALL").isEqualTo(100);
            assertThat(calls).doesNotContainKeys("evalsha", "eval");
            assertThat(calls.get("info"))
                    .as("INFO server once for the process, in its first grant")
                    .isEqualTo(1);
        }
    }

    /**
     * The case the library's kept run id must not get wrong: a server restarted from its RDB file, which
     * holds the namespace's marker (the previous process's run id) and the library itself, but not a grant
     * made after the file was written. The restarted process loads the library anew, reads its own run id,
     * and holds grants back; the holder is told before another client is granted.
     */
    @Test
    void aServerRestartedFromItsFileWithTheLibraryHoldsGrantsBack() throws Exception {
        try (RedisServer server = RedisServer.start();
                LockClient holder = client(server.plainUri() + "?maxLease=2s");
                LockClient other = client(server.plainUri() + "?maxLease=2s")) {
            // the fresh server's hold-back (maxLease) first; then the process has read its run id
            other.lock("warm").acquire(Duration.ofSeconds(10)).close();
            server.call("SAVE");
            Lease held = holder.lock("r").acquire(Duration.ofSeconds(5)); // after the file: lost by the crash
            server.restart();
            assertThat(server.call("FUNCTION", "LIST").toString())
                    .as("the library came back with the file")
                    .contains("dlock_");
            server.call("CONFIG", "RESETSTAT");
            Optional<Lease> early = HoldBackTest.tryUntilConnected(other);
            assertThat(early).as("tryLock() during the hold-back").isEmpty();
            assertThat(calls(server).get("fcall"))
                    .as("answered by the restored library")
                    .isPositive();
            HoldBackTest.assertToldBeforeTheNextGrant(held, other);
        }
    }

    /** An ACL user without {@code FCALL} and {@code FUNCTION} is served by scripts, hold-back included. */
    @Test
    void aUserWithoutFunctionsIsServedByScripts() throws Exception {
        try (RedisServer server = RedisServer.start()) {
            server.call("ACL", "SETUSER", "scripts", "on", ">pw", "~*", "&*", "+@all", "-fcall", "-function");
            String uri = "redis://scripts:pw@127.0.0.1:" + server.port() + "?maxLease=2s";
            try (LockClient holder = client(uri);
                    LockClient other = client(uri)) {
                holder.lock("cycle").acquire(Duration.ofSeconds(10)).close(); // the fresh server's hold-back
                server.call("CONFIG", "RESETSTAT");
                for (int i = 0; i < 5; i++) {
                    holder.lock("cycle").acquire(Duration.ofSeconds(5)).close();
                }
                Map<String, Long> calls = calls(server);
                assertThat(calls.get("evalsha")).isEqualTo(10);
                assertThat(calls).doesNotContainKey("fcall");
                assertThat(calls.get("info"))
                        .as("INFO server in every grant's script")
                        .isEqualTo(5);
                Lease held = holder.lock("r").acquire(Duration.ofSeconds(5));
                server.restart(); // no persistence: the marker is gone
                server.call("ACL", "SETUSER", "scripts", "on", ">pw", "~*", "&*", "+@all", "-fcall", "-function");
                assertThat(HoldBackTest.tryUntilConnected(other)).isEmpty();
                HoldBackTest.assertToldBeforeTheNextGrant(held, other);
            }
        }
    }

    /**
     * A server over {@code maxmemory} (policy {@code noeviction}) refuses to start a function at all, while
     * an {@code EVAL} script fails only at a write that needs memory: the release goes as a script and frees
     * the lock at once, instead of leaving it taken until its lease runs out.
     */
    @Test
    void aReleaseUnderMaxmemoryGoesThroughAsAScript() throws Exception {
        try (RedisServer server = RedisServer.start();
                LockClient holder = client(server.plainUri());
                LockClient other = client(server.plainUri())) {
            server.markFresh(NAMESPACE);
            Lease held = holder.lock("r").acquire(Duration.ofSeconds(5));
            server.call("CONFIG", "SET", "maxmemory", "1");
            try {
                server.call("CONFIG", "RESETSTAT");
                held.close();
                Map<String, Long> calls = calls(server);
                assertThat(calls.get("fcall rejected"))
                        .as("the release's FCALL, refused")
                        .isEqualTo(1);
                assertThat(calls.get("evalsha"))
                        .as("then the release as a script")
                        .isEqualTo(1);
            } finally {
                server.call("CONFIG", "SET", "maxmemory", "0");
            }
            assertThat(other.lock("r").tryAcquire())
                    .as("released, not left to expire")
                    .isPresent();
        }
    }

    /** A library deleted while the client runs: the next calls are scripts, and the library comes back. */
    @Test
    void aLibraryFlushedWhileTheClientRunsIsLoadedAgain() throws Exception {
        try (RedisServer server = RedisServer.start();
                LockClient client = client(server.plainUri())) {
            server.markFresh(NAMESPACE);
            client.lock("cycle").acquire(Duration.ofSeconds(5)).close();
            server.call("FUNCTION", "FLUSH");
            client.lock("cycle").acquire(Duration.ofSeconds(5)).close();
            long deadline = System.nanoTime() + Duration.ofSeconds(5).toNanos();
            while (!server.call("FUNCTION", "LIST").toString().contains("dlock_") && System.nanoTime() < deadline) {
                RedisServer.sleep(20);
            }
            server.call("CONFIG", "RESETSTAT");
            client.lock("cycle").acquire(Duration.ofSeconds(5)).close();
            assertThat(calls(server).get("fcall")).as("functions again").isEqualTo(2);
        }
    }
}
