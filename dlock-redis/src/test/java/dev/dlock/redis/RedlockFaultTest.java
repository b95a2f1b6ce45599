package dev.dlock.redis;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;

import dev.dlock.Lease;
import dev.dlock.LeaseLostException;
import dev.dlock.LockBackendException;
import dev.dlock.LockClient;
import java.time.Duration;
import java.util.ArrayList;
import java.util.List;
import java.util.concurrent.TimeUnit;
import org.junit.jupiter.api.AfterAll;
import org.junit.jupiter.api.BeforeAll;
import org.junit.jupiter.api.Test;

/** Redlock over 5 masters while masters crash, come back and hang. */
class RedlockFaultTest {
    private static final Duration TIMEOUT = Duration.ofSeconds(1);
    private static final Duration LEASE = Duration.ofMillis(1500);
    private static RedlockServers servers;

    @BeforeAll
    static void start() {
        servers = new RedlockServers(5);
        // The first connections of a JVM load many classes; keep that out of the timed cases.
        try (LockClient client = LockClient.builder(servers.uri()).build()) {
            client.lock("warm-up").tryAcquire().orElseThrow().close();
        }
    }

    @AfterAll
    static void stop() {
        servers.close();
    }

    private static LockClient client(String query) {
        return client(query, "fault" + System.nanoTime());
    }

    private static LockClient client(String query, String namespace) {
        return LockClient.builder(servers.uri(query))
                .operationTimeout(TIMEOUT)
                .leaseTime(LEASE)
                .namespace(namespace)
                .build();
    }

    @Test
    void twoOfFiveDownStillGrantAndKeepLeasesThenThreeDownFailAndLoseThemThenTheyComeBack() throws Exception {
        String namespace = "minority" + System.nanoTime();
        try (LockClient client = client("", namespace)) {
            Lease held = client.lock("minority").acquire(Duration.ofSeconds(5));
            servers.get(0).kill();
            servers.get(1).kill();
            // Several renewal periods with a minority down: the lease stays valid, new grants work.
            Thread.sleep(LEASE.toMillis() * 2);
            assertThat(held.isValid()).isTrue();
            try (Lease other = client.lock("minority-2").acquire(Duration.ofSeconds(5))) {
                assertThat(other.isValid()).isTrue();
                assertThat(other.fencingToken()).isPositive();
            }
            try (LockClient second = client("", namespace)) {
                assertThat(second.lock("minority").tryAcquire()).isEmpty();
            }

            servers.get(2).kill();
            long start = System.nanoTime();
            assertThatThrownBy(() -> client.lock("majority").acquire(Duration.ofSeconds(30)))
                    .isInstanceOf(LockBackendException.class)
                    .hasMessageContaining("fewer than a majority (3 of 5)")
                    .hasMessageContaining("127.0.0.1:" + servers.get(0).port() + " error")
                    .hasMessageContaining("127.0.0.1:" + servers.get(2).port() + " error")
                    .hasMessageContaining("127.0.0.1:" + servers.get(4).port() + " granted");
            assertThat(TimeUnit.NANOSECONDS.toMillis(System.nanoTime() - start))
                    .as("failed within the operation timeout")
                    .isLessThan(TIMEOUT.toMillis());
            LeaseLostException lost = held.whenLost().get(LEASE.toMillis() + 1_000, TimeUnit.MILLISECONDS);
            assertThat(lost).hasMessageContaining("minority");
            assertThat(held.isValid()).isFalse();

            for (int i = 0; i < 3; i++) {
                servers.get(i).restart();
            }
            awaitGrant(client, "majority");
        }
    }

    private static void awaitGrant(LockClient client, String name) throws InterruptedException {
        long deadline = System.nanoTime() + TimeUnit.SECONDS.toNanos(15);
        while (true) {
            try (Lease lease = client.lock(name).acquire(Duration.ofSeconds(2))) {
                assertThat(lease.isValid()).isTrue();
                return;
            } catch (LockBackendException e) {
                assertThat(System.nanoTime() - deadline).as("works again: " + e).isNegative();
                Thread.sleep(100);
            }
        }
    }

    @Test
    void aHungMasterSlowsNothingBeyondItsPerMasterTimeout() throws Exception {
        long masterTimeout = 200;
        try (LockClient client = client("?masterTimeout=" + masterTimeout + "ms")) {
            Lease held = client.lock("hung-held").acquire(Duration.ofSeconds(5));
            servers.get(3).freeze();
            try {
                long slowest = 0;
                for (int i = 0; i < 10; i++) {
                    long start = System.nanoTime();
                    Lease lease = client.lock("hung").acquire(Duration.ofSeconds(5));
                    lease.close();
                    slowest = Math.max(slowest, TimeUnit.NANOSECONDS.toMillis(System.nanoTime() - start));
                }
                assertThat(slowest).as("acquire + release with one master hung").isLessThan(masterTimeout + 300);
                // Renewals wait for the hung master at most its timeout, well within the lease.
                Thread.sleep(LEASE.toMillis() * 2);
                assertThat(held.isValid()).isTrue();
            } finally {
                servers.get(3).thaw();
            }
            held.close();
        }
    }

    @Test
    void aMajorityHungFailsWithinTheTimeoutListingTimeoutsAndBusyMasters() throws Exception {
        String namespace = "hung" + System.nanoTime();
        try (LockClient holder = client("?masterTimeout=200ms", namespace);
                LockClient other = client("?masterTimeout=200ms", namespace)) {
            Lease held = holder.lock("taken").acquire(Duration.ofSeconds(5));
            for (int i = 0; i < 3; i++) {
                servers.get(i).freeze();
            }
            try {
                long start = System.nanoTime();
                assertThatThrownBy(() -> other.lock("taken").acquire(Duration.ofSeconds(30)))
                        .isInstanceOf(LockBackendException.class)
                        .hasMessageContaining(
                                "127.0.0.1:" + servers.get(0).port() + " timeout (no answer within 200ms)")
                        .hasMessageContaining("127.0.0.1:" + servers.get(3).port() + " busy")
                        .hasMessageContaining("127.0.0.1:" + servers.get(4).port() + " busy");
                assertThat(TimeUnit.NANOSECONDS.toMillis(System.nanoTime() - start))
                        .isLessThan(TIMEOUT.toMillis());
            } finally {
                for (int i = 0; i < 3; i++) {
                    servers.get(i).thaw();
                }
            }
            held.close();
        }
    }

    @Test
    void renewalSendsOneCommandPerMasterPerTick() throws Exception {
        // This case counts commands, it does not time them: the 200 set-up acquisitions get a master
        // timeout of the whole operation budget (with the default 150 ms, a CI run on a loaded machine
        // saw three masters miss one token write-back and the set-up fail).
        try (LockClient client = client("?masterTimeout=" + TIMEOUT.toMillis() + "ms")) {
            List<Lease> leases = new ArrayList<>();
            for (int i = 0; i < 200; i++) {
                leases.add(client.lock("many-" + i).acquire(Duration.ofSeconds(5)));
            }
            long[] before = afterAcquiresSettled();
            long start = System.nanoTime();
            Thread.sleep(LEASE.toMillis() * 2);
            long ticks = TimeUnit.NANOSECONDS.toMillis(System.nanoTime() - start) / (LEASE.toMillis() / 3) + 2;
            for (int m = 0; m < 5; m++) {
                assertThat(scriptCalls(servers.get(m)) - before[m])
                        .as("script calls on master %d while 200 leases were renewed", m)
                        .isPositive()
                        .isLessThanOrEqualTo(ticks);
            }
            assertThat(leases).allMatch(Lease::isValid);
            leases.forEach(Lease::close);
        }
    }

    /**
     * The script calls of each master once the acquisitions' traffic has ended. An acquire returns when a
     * majority has voted and taken the token write-back; the votes and write-backs of the other masters
     * arrive later, on a loaded machine seconds later (a dry run counted 55 of them on one master within
     * the renewal window). Settled: no master moved by more than one call (a renewal tick) in 300 ms.
     */
    private static long[] afterAcquiresSettled() throws InterruptedException {
        long deadline = System.nanoTime() + TimeUnit.SECONDS.toNanos(20);
        long[] last = new long[5];
        for (int m = 0; m < 5; m++) {
            last[m] = scriptCalls(servers.get(m));
        }
        while (true) {
            Thread.sleep(300);
            boolean settled = true;
            for (int m = 0; m < 5; m++) {
                long now = scriptCalls(servers.get(m));
                settled &= now - last[m] <= 1;
                last[m] = now;
            }
            if (settled) {
                return last;
            }
            assertThat(System.nanoTime() - deadline)
                    .as("the masters' script calls settled within 20 s of the last acquire")
                    .isNegative();
        }
    }

    /** Script calls on a master: functions ({@code FCALL}) and scripts ({@code EVALSHA}, {@code EVAL}). */
    private static long scriptCalls(RedisServer server) {
        String info = (String) server.call("INFO", "commandstats");
        long total = 0;
        for (String line : info.split("\r\n")) {
            if (line.startsWith("cmdstat_fcall:")
                    || line.startsWith("cmdstat_evalsha:")
                    || line.startsWith("cmdstat_eval:")) {
                String calls = line.substring(line.indexOf("calls=") + 6);
                total += Long.parseLong(calls.substring(0, calls.indexOf(',')));
            }
        }
        return total;
    }
}
