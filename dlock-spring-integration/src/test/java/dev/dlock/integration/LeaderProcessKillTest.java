package dev.dlock.integration;

import static org.assertj.core.api.Assertions.assertThat;

import dev.dlock.Lease;
import dev.dlock.LockClient;
import dev.dlock.testsupport.ChildProcesses;
import dev.dlock.testsupport.RedisProcess;
import java.io.BufferedReader;
import java.io.InputStreamReader;
import java.nio.charset.StandardCharsets;
import java.nio.file.Path;
import java.time.Duration;
import java.util.UUID;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.atomic.AtomicReference;
import org.junit.jupiter.api.AfterEach;
import org.junit.jupiter.api.Test;
import org.springframework.context.support.GenericApplicationContext;
import org.springframework.integration.leader.Candidate;
import org.springframework.integration.leader.Context;
import org.springframework.integration.support.leader.LockRegistryLeaderInitiator;

/**
 * Spring Integration's leader initiator across two processes on Redis: the leader's JVM ({@link
 * LeaderNodeMain}) is killed with SIGKILL, so nothing releases its hold; the other application, already
 * campaigning, must be elected once the hold's lease runs out at the store, within a lease of the kill, with
 * a higher term.
 */
class LeaderProcessKillTest {
    private static final Duration LEASE = Duration.ofSeconds(2);

    private RedisProcess redis;
    private Process leader;
    private GenericApplicationContext follower;
    private LockClient followerClient;

    @AfterEach
    void stopAll() throws Exception {
        if (leader != null) {
            leader.destroyForcibly().waitFor(10, TimeUnit.SECONDS);
        }
        if (follower != null) {
            follower.close();
        }
        if (followerClient != null) {
            followerClient.close();
        }
        if (redis != null) {
            redis.close();
        }
    }

    @Test
    void aKilledLeadersProcessIsReplacedWithinALease() throws Exception {
        redis = RedisProcess.start();
        // A fresh server holds a namespace's first grant back (it cannot be told from one that lost its
        // state); this case is about a client's death, not a store restart, so it opts out.
        String uri = redis.uri() + "?unsafeGrantAfterRestart=true";
        String namespace = "si-kill-" + UUID.randomUUID().toString().substring(0, 8);

        leader = ChildProcesses.start(new ProcessBuilder(
                        Path.of(System.getProperty("java.home"), "bin", "java").toString(),
                        "-cp",
                        System.getProperty("surefire.test.class.path", System.getProperty("java.class.path")),
                        LeaderNodeMain.class.getName(),
                        uri,
                        namespace,
                        Long.toString(LEASE.toMillis()))
                .redirectError(ProcessBuilder.Redirect.INHERIT));
        BufferedReader out = new BufferedReader(new InputStreamReader(leader.getInputStream(), StandardCharsets.UTF_8));
        CompletableFuture<Long> leaderTerm = CompletableFuture.supplyAsync(() -> {
            try {
                for (String line = out.readLine(); line != null; line = out.readLine()) {
                    if (line.startsWith("granted ")) {
                        return Long.parseLong(line.substring("granted ".length()));
                    }
                }
                throw new IllegalStateException("the leader process ended without being granted");
            } catch (java.io.IOException e) {
                throw new java.io.UncheckedIOException(e);
            }
        });
        long childTerm = leaderTerm.get(60, TimeUnit.SECONDS);

        AtomicReference<Lease> followerTerm = new AtomicReference<>();
        followerClient = LockClient.builder(uri).namespace(namespace).build();
        DlockLockRegistry registry = new DlockLockRegistry(followerClient, LEASE);
        follower = new GenericApplicationContext();
        follower.registerBean(LockRegistryLeaderInitiator.class, () -> {
            LockRegistryLeaderInitiator initiator = new LockRegistryLeaderInitiator(registry, new Candidate() {
                @Override
                public String getRole() {
                    return LeaderInitiatorContract.ROLE;
                }

                @Override
                public String getId() {
                    return "follower";
                }

                @Override
                public void onGranted(Context ctx) {
                    followerTerm.set(registry.currentLease(getRole()).orElseThrow());
                }

                @Override
                public void onRevoked(Context ctx) {}
            });
            initiator.setHeartBeatMillis(100);
            initiator.setBusyWaitMillis(50);
            return initiator;
        });
        follower.refresh();
        Thread.sleep(LEASE.toMillis()); // the child keeps leading while it lives: renewals, no flapping
        assertThat(followerTerm.get())
                .as("elected while the leader's process lived")
                .isNull();

        long killed = System.nanoTime();
        leader.destroyForcibly();
        assertThat(leader.waitFor(10, TimeUnit.SECONDS)).isTrue();
        LeaderInitiatorContract.awaitTrue(LEASE.plusSeconds(5), () -> followerTerm.get() != null);
        Duration takeover = Duration.ofNanos(System.nanoTime() - killed);
        System.out.println("LeaderProcessKillTest: taken over " + takeover.toMillis() + " ms after the kill");
        assertThat(takeover).as("taken over within a lease of the kill").isLessThan(LEASE.plusSeconds(1));
        assertThat(followerTerm.get().fencingToken()).isGreaterThan(childTerm);
    }
}
