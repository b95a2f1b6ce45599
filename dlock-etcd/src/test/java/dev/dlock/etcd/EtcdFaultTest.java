package dev.dlock.etcd;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;

import dev.dlock.Lease;
import dev.dlock.LeaseLostException;
import dev.dlock.LockBackendException;
import dev.dlock.LockClient;
import dev.dlock.LockException;
import dev.dlock.testsupport.EtcdServers;
import dev.dlock.testsupport.TcpProxy;
import java.time.Duration;
import java.util.ArrayList;
import java.util.Comparator;
import java.util.List;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.CopyOnWriteArrayList;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.atomic.AtomicBoolean;
import java.util.stream.Collectors;
import org.junit.jupiter.api.AfterEach;
import org.junit.jupiter.api.BeforeEach;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.Timeout;

/** Faults on a cluster of three etcd members (a fresh cluster per test). */
@Timeout(value = 120, unit = TimeUnit.SECONDS)
class EtcdFaultTest {
    private static final Duration LEASE = Duration.ofSeconds(2);
    private static final Duration OP_TIMEOUT = Duration.ofSeconds(2);

    private EtcdServers cluster;
    private final List<LockClient> clients = new ArrayList<>();

    @BeforeEach
    void startCluster() throws Exception {
        cluster = EtcdServers.cluster();
        JetcdWarmUp.once(cluster.member(0).clientUrl());
    }

    @AfterEach
    void stopCluster() {
        clients.forEach(LockClient::close);
        cluster.close();
    }

    private LockClient client(String hosts) {
        return client(hosts, LEASE);
    }

    private LockClient client(String hosts, Duration lease) {
        // Killed leaders, not stalled ones: Debian 12's etcd 3.4.23 is accepted (StaleLeaderCheck).
        LockClient c = LockClient.builder("etcd://" + hosts + "?allowStaleLeaderRevoke=true")
                .namespace("faults")
                .leaseTime(lease)
                .operationTimeout(OP_TIMEOUT)
                .build();
        clients.add(c);
        return c;
    }

    @Test
    void killingTheLeaderNeverMakesTwoHoldersAndHoldsSurviveOrAreTold() throws Exception {
        LockClient holder = client(cluster.hosts());
        Lease survivor = holder.lock("survivor").acquire(Duration.ofSeconds(10));
        // Sections whose lease was still valid at their end: those must never overlap.
        List<long[]> sections = new CopyOnWriteArrayList<>();
        AtomicBoolean stop = new AtomicBoolean();
        List<CompletableFuture<Void>> churn = new ArrayList<>();
        for (int i = 0; i < 2; i++) {
            LockClient c = client(cluster.hosts());
            churn.add(CompletableFuture.runAsync(() -> {
                while (!stop.get()) {
                    try (Lease lease = c.lock("churn").acquire(Duration.ofSeconds(5))) {
                        long start = System.nanoTime();
                        sleepQuietly(5);
                        long end = System.nanoTime();
                        if (lease.isValid()) {
                            sections.add(new long[] {start, end, lease.fencingToken()});
                        }
                    } catch (LockException expected) {
                        // during the election an attempt may fail or time out, and a lease may be lost (and told)
                    }
                }
            }));
        }
        Thread.sleep(500);
        EtcdServers.Member leader = cluster.leader();
        cluster.kill(leader);
        Thread.sleep(LEASE.toMillis() * 3);
        stop.set(true);
        CompletableFuture.allOf(churn.toArray(CompletableFuture[]::new)).get(30, TimeUnit.SECONDS);

        List<long[]> ordered = new ArrayList<>(sections);
        ordered.sort(Comparator.comparingLong(x -> x[0]));
        for (int i = 1; i < ordered.size(); i++) {
            assertThat(ordered.get(i)[0]).as("no two valid holders at once").isGreaterThan(ordered.get(i - 1)[1]);
            assertThat(ordered.get(i)[2]).as("tokens increase").isGreaterThan(ordered.get(i - 1)[2]);
        }
        assertThat(ordered.size()).as("the lock kept being granted").isGreaterThan(10);
        LockClient other = client(cluster.hosts());
        if (survivor.isValid()) {
            assertThat(survivor.whenLost()).isNotDone();
            assertThat(other.lock("survivor").tryAcquire())
                    .as("a hold that is still valid excludes everybody else")
                    .isEmpty();
        } else {
            assertThat(survivor.whenLost()).as("a lost hold is told").isDone();
        }
        survivor.close();
        other.lock("survivor").acquire(Duration.ofSeconds(10)).close();
    }

    @Test
    void losingTheQuorumFailsOperationsWithinTheTimeoutAndTellsHolders() throws Exception {
        LockClient c = client(cluster.hosts());
        Lease held = c.lock("quorum").acquire(Duration.ofSeconds(10));
        EtcdServers.Member leader = cluster.leader();
        cluster.kill(leader);
        cluster.kill(
                cluster.members().stream().filter(m -> m != leader).findFirst().orElseThrow());

        long start = System.nanoTime();
        assertThatThrownBy(() -> c.lock("other").acquire(Duration.ofSeconds(30)))
                .isInstanceOf(LockBackendException.class);
        assertThat(TimeUnit.NANOSECONDS.toMillis(System.nanoTime() - start))
                .as("failed within the operation timeout plus a margin")
                .isLessThan(OP_TIMEOUT.toMillis() + 2_000);

        LeaseLostException lost =
                held.whenLost().get(LEASE.toMillis() + OP_TIMEOUT.toMillis() + 5_000, TimeUnit.MILLISECONDS);
        assertThat(lost).hasMessageContaining("quorum");
        assertThat(held.isValid()).isFalse();
        assertThat(TimeUnit.NANOSECONDS.toMillis(System.nanoTime() - start))
                .as("told within the lease time plus the operation timeout")
                .isLessThan(LEASE.toMillis() + OP_TIMEOUT.toMillis() + 3_000);
    }

    @Test
    void aPausedClientLosesItsHoldBeforeAnotherIsGrantedWithALargerToken() throws Exception {
        List<TcpProxy> proxies = new ArrayList<>();
        for (EtcdServers.Member m : cluster.members()) {
            proxies.add(TcpProxy.start("127.0.0.1", m.clientPort()));
        }
        try {
            // A longer lease here, so that an etcd lease shorter than the lease time would surely show.
            Duration lease = Duration.ofSeconds(4);
            LockClient paused =
                    client(proxies.stream().map(p -> "127.0.0.1:" + p.port()).collect(Collectors.joining(",")), lease);
            Lease old = paused.lock("pause").acquire(Duration.ofSeconds(10));
            proxies.forEach(TcpProxy::cut); // nothing from this client reaches etcd any more: no keep-alives

            LockClient other = client(cluster.hosts());
            long start = System.nanoTime();
            try (Lease next = other.lock("pause").acquire(Duration.ofSeconds(30))) {
                assertThat(old.isValid())
                        .as("the paused holder considered itself lost before the other was granted")
                        .isFalse();
                assertThat(old.whenLost()).isDone();
                assertThat(next.fencingToken()).isGreaterThan(old.fencingToken());
                assertThat(TimeUnit.NANOSECONDS.toMillis(System.nanoTime() - start))
                        .as("granted once the paused client's etcd lease ran out")
                        .isLessThan(lease.toMillis() + 5_000);
            }
        } finally {
            proxies.forEach(TcpProxy::close);
        }
    }

    private static void sleepQuietly(long millis) {
        try {
            Thread.sleep(millis);
        } catch (InterruptedException e) {
            Thread.currentThread().interrupt();
        }
    }
}
