package dev.dlock.integration;

import static org.assertj.core.api.Assertions.assertThat;

import dev.dlock.Lease;
import dev.dlock.LockClient;
import dev.dlock.tck.FreezableBackend;
import dev.dlock.testsupport.TcpProxy;
import java.time.Duration;
import java.util.ArrayList;
import java.util.List;
import java.util.UUID;
import java.util.concurrent.CopyOnWriteArrayList;
import java.util.function.BooleanSupplier;
import org.junit.jupiter.api.AfterEach;
import org.junit.jupiter.api.Test;
import org.springframework.context.support.GenericApplicationContext;
import org.springframework.integration.leader.Candidate;
import org.springframework.integration.leader.Context;
import org.springframework.integration.leader.event.OnGrantedEvent;
import org.springframework.integration.support.leader.LockRegistryLeaderInitiator;

/**
 * Spring Integration's own {@link LockRegistryLeaderInitiator} on {@link DlockLockRegistry}: two application
 * contexts, each with its own {@link LockClient} (as two processes would have), campaign for one role.
 *
 * <p>Checked at every election, on the elected node's thread: no other node's term (the lease behind its
 * hold) is still valid, and the new term's fencing token is above every earlier one. A leader that stops
 * hands over at once; a leader whose process pauses (its connection to the store goes silent) is replaced
 * within a lease, and its own term had ended by its own clock before the other node was elected.
 *
 * <p>Each store test supplies the store's address; the pause is a {@link TcpProxy} that stops forwarding,
 * or, for the in-memory store, a {@link FreezableBackend}.
 */
abstract class LeaderInitiatorContract {
    static final String ROLE = "si-leader";
    static final Duration LEASE = Duration.ofSeconds(2);
    private static final long HEARTBEAT_MILLIS = 100;

    private final String namespace = "si-" + UUID.randomUUID().toString().substring(0, 8);
    private final List<String> violations = new CopyOnWriteArrayList<>();
    private final List<Lease> terms = new CopyOnWriteArrayList<>();
    private final List<Node> nodes = new ArrayList<>();

    /**
     * The store's URI at a loopback port.
     *
     * @param port the store's port, or a proxy's in front of it
     */
    abstract String uri(int port);

    /** The store's loopback port, or -1 for a store inside this JVM. */
    abstract int storePort();

    /** The longest time a paused leader's hold can outlive its last renewal at the store. */
    Duration storeLease() {
        return LEASE;
    }

    /** One application: a client, a registry, and the initiator in a Spring context. */
    final class Node implements Candidate, AutoCloseable {
        final String id;
        final List<String> events = new CopyOnWriteArrayList<>();
        private final TcpProxy proxy;
        private volatile FreezableBackend wire;
        private final LockClient client;
        private final DlockLockRegistry registry;
        private final GenericApplicationContext context = new GenericApplicationContext();
        volatile Lease term;

        Node(String id) throws Exception {
            this.id = id;
            proxy = storePort() < 0 ? null : TcpProxy.start("127.0.0.1", storePort());
            LockClient.Builder b = LockClient.builder(uri(proxy == null ? -1 : proxy.port()))
                    .namespace(namespace)
                    .operationTimeout(Duration.ofSeconds(5));
            client = b.backend(b.backend().andThen(backend -> wire = new FreezableBackend(backend)))
                    .build();
            registry = new DlockLockRegistry(client, LEASE);
            context.registerBean(DlockLockRegistry.class, () -> registry);
            context.registerBean(LockRegistryLeaderInitiator.class, () -> {
                LockRegistryLeaderInitiator initiator = new LockRegistryLeaderInitiator(registry, this);
                initiator.setHeartBeatMillis(HEARTBEAT_MILLIS);
                initiator.setBusyWaitMillis(50);
                return initiator;
            });
            context.addApplicationListener(event -> {
                if (event instanceof OnGrantedEvent granted) {
                    events.add("event:" + granted.getRole());
                }
            });
        }

        void start() {
            context.refresh(); // starts the initiator, a SmartLifecycle
        }

        /** From now on nothing this node sends reaches the store, as when its process is paused. */
        void pause() {
            if (proxy != null) {
                proxy.freeze();
            } else {
                wire.freeze();
            }
        }

        boolean leads() {
            return context.isActive()
                    && context.getBean(LockRegistryLeaderInitiator.class)
                            .getContext()
                            .isLeader();
        }

        @Override
        public String getRole() {
            return ROLE;
        }

        @Override
        public String getId() {
            return id;
        }

        @Override
        public void onGranted(Context ctx) {
            Lease lease = registry.currentLease(ROLE).orElse(null);
            if (lease == null) {
                violations.add(id + " was granted leadership without holding the lock");
                return;
            }
            synchronized (terms) {
                for (Lease earlier : terms) {
                    if (earlier.isValid()) {
                        violations.add(id + " elected (term " + lease.fencingToken() + ") while term "
                                + earlier.fencingToken() + " was still valid");
                    }
                    if (earlier.fencingToken() >= lease.fencingToken()) {
                        violations.add("term " + lease.fencingToken() + " after term " + earlier.fencingToken());
                    }
                }
                terms.add(lease);
            }
            term = lease;
            events.add("granted");
        }

        @Override
        public void onRevoked(Context ctx) {
            events.add("revoked");
        }

        void stop() {
            context.close();
        }

        @Override
        public void close() throws Exception {
            if (proxy != null) {
                proxy.restore();
            }
            context.close();
            client.close();
            if (proxy != null) {
                proxy.close();
            }
        }
    }

    private Node node(String id) throws Exception {
        Node node = new Node(id);
        nodes.add(node);
        node.start();
        return node;
    }

    @AfterEach
    void closeNodes() throws Exception {
        for (Node node : nodes) {
            node.close();
        }
    }

    @Test
    void oneNodeLeadsAtATimeAndAStoppedLeaderHandsOverAtOnce() throws Exception {
        Node a = node("a");
        Node b = node("b");
        awaitTrue(Duration.ofSeconds(10), () -> a.term != null || b.term != null);
        Thread.sleep(LEASE.toMillis() * 2); // renewals and heartbeats keep one leader, no flapping
        Node leader = a.term != null ? a : b;
        Node other = leader == a ? b : a;
        assertThat(other.leads()).isFalse();
        assertThat(leader.leads()).isTrue();
        assertThat(leader.events).containsExactly("granted", "event:" + ROLE);
        assertThat(other.events).isEmpty();

        Lease term = leader.term;
        long stopped = System.nanoTime();
        leader.stop();
        awaitTrue(LEASE, () -> other.term != null); // released, not run out: well within a lease
        assertThat(Duration.ofNanos(System.nanoTime() - stopped)).isLessThan(LEASE);
        assertThat(other.term.fencingToken()).isGreaterThan(term.fencingToken());
        awaitTrue(Duration.ofSeconds(1), () -> leader.events.contains("revoked")); // told after its unlock
        assertThat(term.isValid()).isFalse();
        assertThat(violations).isEmpty();
    }

    @Test
    void aPausedLeaderIsReplacedWithinALeaseAndItsTermHadEndedFirst() throws Exception {
        Node a = node("a");
        Node b = node("b");
        awaitTrue(Duration.ofSeconds(10), () -> a.term != null || b.term != null);
        Node leader = a.term != null ? a : b;
        Node other = leader == a ? b : a;
        Lease term = leader.term;

        long paused = System.nanoTime();
        leader.pause();
        awaitTrue(storeLease().plusSeconds(5), () -> other.term != null);
        Duration takeover = Duration.ofNanos(System.nanoTime() - paused);
        System.out.println(getClass().getSimpleName() + ": taken over " + takeover.toMillis() + " ms after the pause");
        assertThat(takeover)
                .as("taken over within a lease")
                .isLessThan(storeLease().plusSeconds(2));
        assertThat(violations)
                .as("the paused leader's term ended by its own clock first")
                .isEmpty();
        assertThat(term.isValid()).isFalse();
        awaitTrue(Duration.ofSeconds(2), () -> leader.events.contains("revoked"));
        assertThat(leader.leads()).isFalse();
        assertThat(other.term.fencingToken()).isGreaterThan(term.fencingToken());
    }

    static void awaitTrue(Duration within, BooleanSupplier condition) throws InterruptedException {
        long deadline = System.nanoTime() + within.toNanos();
        while (!condition.getAsBoolean()) {
            if (System.nanoTime() > deadline) {
                throw new AssertionError("not true within " + within);
            }
            Thread.sleep(10);
        }
    }
}
