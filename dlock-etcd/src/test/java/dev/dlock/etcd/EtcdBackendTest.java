package dev.dlock.etcd;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;

import dev.dlock.Lease;
import dev.dlock.LeaseLostException;
import dev.dlock.LockBackendException;
import dev.dlock.LockClient;
import dev.dlock.LockInfo;
import dev.dlock.LockKind;
import dev.dlock.LockListener;
import dev.dlock.testsupport.EtcdServers;
import dev.dlock.testsupport.FreePorts;
import io.etcd.jetcd.ByteSequence;
import io.etcd.jetcd.Client;
import io.etcd.jetcd.KeyValue;
import io.etcd.jetcd.options.GetOption;
import io.grpc.CallOptions;
import io.grpc.Channel;
import io.grpc.ClientCall;
import io.grpc.ClientInterceptor;
import io.grpc.MethodDescriptor;
import java.nio.charset.StandardCharsets;
import java.time.Duration;
import java.util.ArrayList;
import java.util.List;
import java.util.Map;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.ConcurrentHashMap;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.atomic.AtomicInteger;
import java.util.stream.Collectors;
import org.junit.jupiter.api.AfterAll;
import org.junit.jupiter.api.AfterEach;
import org.junit.jupiter.api.BeforeAll;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.Timeout;

/** What is particular to etcd: the key layout, the one lease per client, lease loss, the Jepsen re-check. */
@Timeout(value = 60, unit = TimeUnit.SECONDS)
class EtcdBackendTest {
    private static EtcdServers server;
    private static Client etcd;
    private final List<AutoCloseable> closeables = new ArrayList<>();

    @BeforeAll
    static void start() throws Exception {
        server = EtcdServers.single();
        etcd = Client.builder().endpoints(server.member(0).clientUrl()).build();
        JetcdWarmUp.once(server.member(0).clientUrl());
    }

    @AfterAll
    static void stop() {
        etcd.close();
        server.close();
    }

    @AfterEach
    void closeAll() throws Exception {
        for (AutoCloseable c : closeables) {
            c.close();
        }
    }

    private String hosts() {
        return "127.0.0.1:" + server.member(0).clientPort();
    }

    private LockClient client(String uri, Duration lease) {
        LockClient c = LockClient.builder(uri).leaseTime(lease).build();
        closeables.add(c);
        return c;
    }

    private static List<KeyValue> keys(String prefix) {
        return etcd.getKVClient()
                .get(bytes(prefix), GetOption.builder().isPrefix(true).build())
                .join()
                .getKvs();
    }

    private static ByteSequence bytes(String s) {
        return ByteSequence.from(s, StandardCharsets.UTF_8);
    }

    /** The fencing token of a hold on this key: its create revision times 16 (docs/dlock-etcd.md). */
    private static long token(KeyValue kv) {
        return 16 * kv.getCreateRevision();
    }

    private static List<Long> holderTokens(LockClient c, String name) {
        return c.describe(name).stream()
                .filter(info -> info.kind() == LockKind.LOCK)
                .flatMap(info -> info.holders().stream())
                .map(LockInfo.Holder::fencingToken)
                .toList();
    }

    @Test
    void keysAreLaidOutAsDocumented() {
        LockClient c = LockClient.builder("etcd://" + hosts() + "/app/x")
                .namespace("ns")
                .build();
        closeables.add(c);
        try (Lease lease = c.lock("a/b%").acquire(Duration.ofSeconds(5))) {
            List<KeyValue> kvs = keys("app/x/ns/lock/a%2Fb%25/");
            assertThat(kvs).hasSize(1);
            assertThat(kvs.get(0).getValue().toString(StandardCharsets.UTF_8)).isEqualTo("EXCLUSIVE 1 0");
            assertThat(token(kvs.get(0))).isEqualTo(lease.fencingToken());
            assertThat(kvs.get(0).getLease()).isNotZero();
        }
        assertThat(keys("app/x/ns/")).isEmpty();
    }

    /**
     * Cohort hand-off on etcd: a hold released by one caller of client A passes to A's next caller with
     * the previous token + 1, inside the room of A's grant; client B, queued in etcd meanwhile, is granted
     * afterwards with a token above every pass. {@code describe} shows the token of the store's grant.
     */
    @Test
    void aPassTakesTheNextTokenOfTheGrantsRoomAndAnotherClientIsGrantedAboveIt() throws Exception {
        LockClient a = LockClient.builder("etcd://" + hosts() + "/room")
                .localHandoff(32, Duration.ofSeconds(30)) // the chain's time bound must outlast the set-up below
                .build();
        closeables.add(a);
        LockClient b = client("etcd://" + hosts() + "/room", Duration.ofSeconds(5));
        Lease first = a.lock("c").acquire(Duration.ofSeconds(5));
        assertThat(first.fencingToken())
                .as("the create revision of the holder's key, times 16")
                .isEqualTo(token(keys("room/").get(0)));
        assertThat(holderTokens(b, "c")).containsExactly(first.fencingToken());
        CompletableFuture<Lease> second = a.lock("c").acquireAsync(Duration.ofSeconds(30));
        CompletableFuture<Lease> remote = b.lock("c").acquireAsync(Duration.ofSeconds(30));
        awaitKeys("room/", 3); // both waiters queued in etcd, behind A's key

        first.close();
        Lease passed = second.get(10, TimeUnit.SECONDS);
        assertThat(passed.fencingToken())
                .as("passed without the store: the previous token + 1")
                .isEqualTo(first.fencingToken() + 1);
        assertThat(holderTokens(b, "c")).as("the store still holds A's grant").containsExactly(first.fencingToken());
        assertThat(remote).isNotDone();

        passed.close();
        Lease granted = remote.get(10, TimeUnit.SECONDS);
        KeyValue key = keys("room/").stream()
                .filter(kv -> token(kv) == granted.fencingToken())
                .findFirst()
                .orElseThrow(() -> new AssertionError("no key of B's grant " + granted.fencingToken()));
        assertThat(granted.fencingToken())
                .as("B's key was created after A's, so its token is at least 16 above A's grant")
                .isGreaterThanOrEqualTo(first.fencingToken() + 16)
                .isGreaterThan(passed.fencingToken());
        assertThat(holderTokens(a, "c")).containsExactly(token(key));
        granted.close();
    }

    @Test
    void oneLeaseAndOneKeepAlivePerTickWhateverTheNumberOfLocks() throws Exception {
        Map<String, AtomicInteger> calls = new ConcurrentHashMap<>();
        Client counted = Client.builder()
                .endpoints(server.member(0).clientUrl())
                .interceptor(new Counting(calls))
                .build();
        closeables.add(counted);
        AtomicInteger ticks = new AtomicInteger();
        AtomicInteger renewed = new AtomicInteger();
        LockClient c = LockClient.builder(EtcdBackends.of(counted))
                .namespace("onelease")
                .leaseTime(Duration.ofMillis(1500))
                .listener(new LockListener() {
                    @Override
                    public void renewed(int leases, int lost) {
                        ticks.incrementAndGet();
                        renewed.addAndGet(leases);
                    }
                })
                .build();
        closeables.add(c);
        List<Lease> leases = new ArrayList<>();
        for (int i = 0; i < 50; i++) {
            leases.add(c.lock("l" + i).acquire(Duration.ofSeconds(5)));
        }
        assertThat(keys("onelease/").stream().map(KeyValue::getLease).distinct())
                .as("every key on the client's one etcd lease")
                .hasSize(1);
        Thread.sleep(1_000); // the renewals fall into step
        int keepAlivesBefore = count(calls, "LeaseKeepAlive");
        int ticksBefore = ticks.get();
        int renewedBefore = renewed.get();
        Thread.sleep(3_000); // about six renewal periods of 0.5 s
        int keepAlives = count(calls, "LeaseKeepAlive") - keepAlivesBefore;
        int tickCount = ticks.get() - ticksBefore;
        assertThat(renewed.get() - renewedBefore)
                .as("every lease renewed about every 0.5 s")
                .isGreaterThanOrEqualTo(50 * 4);
        assertThat(keepAlives)
                .as("one keep-alive per renewal tick (%d ticks), not one per lock", tickCount)
                .isBetween(1, tickCount + 1);
        assertThat(tickCount)
                .as("renewal ticks in 3 s (per-lock renewal would make ~300)")
                .isLessThan(20);
        assertThat(leases).allMatch(Lease::isValid);
        leases.forEach(Lease::close);
    }

    private static int count(Map<String, AtomicInteger> calls, String method) {
        return calls.entrySet().stream()
                .filter(e -> e.getKey().endsWith("/" + method))
                .mapToInt(e -> e.getValue().get())
                .sum();
    }

    /**
     * Counts gRPC calls by method name. jetcd's {@code keepAliveOnce} is one call (a stream on which it
     * writes the request, and writes it once more when it ends the stream).
     */
    private record Counting(Map<String, AtomicInteger> calls) implements ClientInterceptor {
        @Override
        public <Q, A> ClientCall<Q, A> interceptCall(MethodDescriptor<Q, A> method, CallOptions options, Channel next) {
            calls.computeIfAbsent(method.getFullMethodName(), m -> new AtomicInteger())
                    .incrementAndGet();
            return next.newCall(method, options);
        }
    }

    @Test
    void aRevokedLeaseIsToldToEveryHolder() throws Exception {
        LockClient holder = client("etcd://" + hosts() + "/revoke", Duration.ofSeconds(5));
        List<Lease> leases = List.of(
                holder.lock("r1").acquire(Duration.ofSeconds(5)),
                holder.fairLock("r2").acquire(Duration.ofSeconds(5)),
                holder.semaphore("r3", 2).acquire(Duration.ofSeconds(5)));
        long leaseId = keys("revoke/").get(0).getLease();
        etcd.getLeaseClient().revoke(leaseId).join();
        long revoked = System.nanoTime();
        for (Lease lease : leases) {
            // Told at the next renewal tick (a third of the 5 s lease time), not at the lease's deadline.
            LeaseLostException lost = lease.whenLost().get(10, TimeUnit.SECONDS);
            assertThat(TimeUnit.NANOSECONDS.toMillis(System.nanoTime() - revoked))
                    .isLessThan(4_000);
            assertThat(lost.getMessage()).contains(lease.name()).contains("etcd lease");
            assertThat(lease.isValid()).isFalse();
        }
        LockClient other = client("etcd://" + hosts() + "/revoke", Duration.ofSeconds(5));
        other.lock("r1").tryAcquire().orElseThrow().close();
        Lease again = holder.lock("r1").acquire(Duration.ofSeconds(5));
        assertThat(again.isValid()).as("the client takes a new lease").isTrue();
        again.close();
    }

    /** A holder's lease, a waiter's pending acquisition and the waiter's key in etcd. */
    private record Queue(Lease held, CompletableFuture<Lease> waiting, KeyValue waiterKey) {}

    /** One client holds "q" under {@code prefix}, another waits for it with its key queued in etcd. */
    private Queue waiterBehindAHolder(String prefix, Duration leaseTime) throws Exception {
        LockClient a = client("etcd://" + hosts() + "/" + prefix, leaseTime);
        LockClient b = client("etcd://" + hosts() + "/" + prefix, leaseTime);
        Lease held = a.lock("q").acquire(Duration.ofSeconds(5));
        CompletableFuture<Lease> waiting = b.lock("q").acquireAsync(Duration.ofSeconds(30));
        awaitKeys(prefix + "/", 2);
        KeyValue waiterKey = keys(prefix + "/").stream()
                .filter(kv -> token(kv) != held.fencingToken())
                .findFirst()
                .orElseThrow();
        return new Queue(held, waiting, waiterKey);
    }

    private static void awaitKeys(String prefix, int count) throws InterruptedException {
        long deadline = System.nanoTime() + TimeUnit.SECONDS.toNanos(10);
        while (keys(prefix).size() < count) {
            assertThat(System.nanoTime() - deadline)
                    .as("%d keys under %s", count, prefix)
                    .isNegative();
            Thread.sleep(10);
        }
    }

    @Test
    void aWaiterWhoseLeaseIsRevokedQueuesAgainOnANewLease() throws Exception {
        Queue queue = waiterBehindAHolder("requeue", Duration.ofSeconds(30));
        long waiterLease = queue.waiterKey().getLease();
        etcd.getLeaseClient().revoke(waiterLease).join(); // the waiter's client does not know yet
        queue.held().close();
        Lease granted = queue.waiting().get(20, TimeUnit.SECONDS);
        assertThat(granted.isValid()).isTrue();
        assertThat(keys("requeue/")).singleElement().satisfies(kv -> {
            assertThat(token(kv)).isEqualTo(granted.fencingToken());
            assertThat(kv.getLease()).as("on a new lease").isNotEqualTo(waiterLease);
        });
        granted.close();
    }

    @Test
    void aWaiterWhoseKeyVanishedWhileWaitingIsNeverGrantedOnIt() throws Exception {
        Queue queue = waiterBehindAHolder("jepsen", Duration.ofSeconds(5));
        long deletedAt = etcd.getKVClient()
                .delete(queue.waiterKey().getKey())
                .join()
                .getHeader()
                .getRevision();
        queue.held().close();
        Lease granted = queue.waiting().get(20, TimeUnit.SECONDS);
        assertThat(granted.fencingToken())
                .as("granted on a key written after the old one vanished, not on the vanished key")
                .isGreaterThan(16 * deletedAt);
        assertThat(keys("jepsen/")).extracting(EtcdBackendTest::token).containsExactly(granted.fencingToken());
        granted.close();
    }

    @Test
    void anApplicationsOwnClientStaysOpen() {
        LockClient c =
                LockClient.builder(EtcdBackends.of(etcd)).namespace("own").build();
        c.lock("x").acquire(Duration.ofSeconds(5)).close();
        c.close();
        assertThat(etcd.getKVClient().get(bytes("own/")).join().getCount()).isZero();
        assertThatThrownBy(() -> EtcdBackends.of(null)).isInstanceOf(NullPointerException.class);
    }

    @Test
    void veryShortOperationTimeoutsAreAccepted() {
        // jetcd rejects retry settings whose delays exceed the retry budget: the provider must scale them.
        for (long millis : new long[] {1, 5, 20, 100}) {
            try {
                LockClient.builder("etcd://" + hosts())
                        .operationTimeout(Duration.ofMillis(millis))
                        .build()
                        .close();
            } catch (LockBackendException tooShortToConnect) {
                assertThat(tooShortToConnect).hasMessageContaining("could not reach etcd");
            }
        }
    }

    @Test
    void connectingToNoServerFailsWithinTheTimeout() throws Exception {
        // A refused connection, once jetcd's code is loaded (the first connect of a JVM: EtcdConnectTest).
        LockClient.builder("etcd://" + hosts()).build().close();
        int port = FreePorts.next(); // nothing listens there
        long start = System.nanoTime();
        assertThatThrownBy(() -> LockClient.builder("etcd://127.0.0.1:" + port)
                        .operationTimeout(Duration.ofSeconds(1))
                        .build())
                .isInstanceOf(LockBackendException.class)
                .hasMessageContaining("etcd");
        assertThat(TimeUnit.NANOSECONDS.toMillis(System.nanoTime() - start)).isLessThan(3_000);
    }

    @Test
    void describeShowsHoldersAndWaitersOfEveryClient() throws Exception {
        LockClient a = client("etcd://" + hosts() + "/describe", Duration.ofSeconds(5));
        LockClient b = client("etcd://" + hosts() + "/describe", Duration.ofSeconds(5));
        Lease r1 = a.readWriteLock("rw").readLock().acquire(Duration.ofSeconds(5));
        Lease r2 = b.readWriteLock("rw").readLock().acquire(Duration.ofSeconds(5));
        CompletableFuture<Lease> writer = b.readWriteLock("rw").writeLock().acquireAsync(Duration.ofSeconds(30));
        awaitKeys("describe/", 3); // the writer queued
        var info = a.describe("rw").stream()
                .filter(i -> i.kind() == LockKind.READ_WRITE)
                .findFirst()
                .orElseThrow();
        assertThat(info.holders())
                .extracting(h -> h.fencingToken())
                .containsExactlyInAnyOrder(r1.fencingToken(), r2.fencingToken());
        assertThat(info.holders())
                .allMatch(h -> h.mode().equals("read") && !h.expiresIn().isNegative());
        assertThat(info.waiters()).isEqualTo(1);
        r1.close();
        r2.close();
        writer.get(10, TimeUnit.SECONDS).close();
        assertThat(keys("describe/").stream()
                        .map(kv -> kv.getKey().toString(StandardCharsets.UTF_8))
                        .collect(Collectors.toList()))
                .isEmpty();
    }
}
