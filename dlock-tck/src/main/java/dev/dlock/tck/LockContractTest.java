package dev.dlock.tck;

import dev.dlock.LockClient;
import java.time.Duration;
import java.util.List;
import java.util.Optional;
import java.util.concurrent.CopyOnWriteArrayList;
import java.util.concurrent.ThreadLocalRandom;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.atomic.AtomicReference;
import java.util.function.Consumer;
import org.junit.jupiter.api.AfterEach;
import org.junit.jupiter.api.BeforeEach;
import org.junit.jupiter.api.Nested;
import org.junit.jupiter.api.Timeout;

/**
 * The contract every dlock backend passes. A backend's test extends this class and implements three
 * hooks: how to build a client of the store under test, and how to make the store unreachable and
 * reachable again.
 *
 * <pre>{@code
 * class MyStoreContractTest extends LockContractTest {
 *     protected LockClient.Builder newClientBuilder() { return LockClient.builder("mystore://..."); }
 *     protected void stopStore() { proxy.cut(); }
 *     protected void startStore() { proxy.restore(); }
 * }
 * }</pre>
 *
 * <p>Every test uses a fresh random namespace, so tests do not see each other's locks. Times are
 * generous: the suite must pass on a loaded two-core machine; where it checks a bound, the bound is the
 * contract's (wait time plus a margin), never a performance target.
 *
 * <p>The cases are grouped in {@code @Nested} sections, listed at the end of this class like a table of
 * contents; each section's cases live in a file of their own. JUnit runs every section for every
 * subclass, inside the subclass's test instance, so the hooks above apply to all of them. A store adapts
 * the contract only through these hooks (for example {@link #offersFairLocks()}: the fair-lock cases then
 * assert the refusal), never by overriding or leaving out a case; a store's own extra cases are plain
 * {@code @Test} methods of its subclass.
 *
 * <p>Surefire matches a case by the class that declares it, its section (e.g. {@code
 * LockContractTest$ReadWrite}). {@code -Dtest=RedisContractTest} runs the whole contract on one store,
 * {@code -Dtest='RedisContractTest#readersShare,LockContractTest*#readersShare'} one case of it, {@code
 * -Dtest='RedisContractTest#none,LockContractTest$Fuzz'} one section, and {@code
 * -Dtest='*ContractTest*#readersShare'} one case on every store of a module. Once one pattern names a
 * method, a case runs only if some pattern matches its section: do not list a whole store beside it.
 */
@Timeout(value = 120, unit = TimeUnit.SECONDS)
public abstract class LockContractTest {
    private final List<LockClient> clients = new CopyOnWriteArrayList<>();
    private final java.util.Map<LockClient, FreezableBackend> freezable =
            new java.util.concurrent.ConcurrentHashMap<>();
    private String namespace;

    /** For subclasses. */
    protected LockContractTest() {}

    /**
     * A builder for a new client of the store under test. The suite sets namespace, operation timeout
     * and, per test, lease time and other options on it.
     *
     * @return a fresh builder
     */
    protected abstract LockClient.Builder newClientBuilder();

    /**
     * Makes the store unreachable for every client (kill the server, cut dlock-test-support's {@code TcpProxy}). Returns
     * promptly.
     *
     * @throws Exception if the store could not be stopped
     */
    protected abstract void stopStore() throws Exception;

    /**
     * Makes the store reachable again, with its data if it persists any; returns when it answers.
     *
     * @throws Exception if the store could not be started
     */
    protected abstract void startStore() throws Exception;

    /**
     * The short lease time used by expiry tests. Stores that cannot expire faster may raise it.
     *
     * @return a lease time of about a second
     */
    protected Duration shortLease() {
        return Duration.ofMillis(1500);
    }

    /**
     * The operation timeout the suite configures, and the bound for "the store is down" failures.
     *
     * @return a timeout of a few seconds
     */
    protected Duration operationTimeout() {
        return Duration.ofSeconds(2);
    }

    /**
     * Whether the store offers fair locks. A store that does not must refuse {@code fairLock()} with
     * {@link UnsupportedOperationException}; the fair-lock cases then assert that refusal instead.
     *
     * @return true by default
     */
    protected boolean offersFairLocks() {
        return true;
    }

    /**
     * Whether the store offers semaphores; see {@link #offersFairLocks()}.
     *
     * @return true by default
     */
    protected boolean offersSemaphores() {
        return true;
    }

    /**
     * Whether the store reserves fencing-token room in its grants ({@code LockBackend.tokenBlock() > 1}),
     * so that the engine may pass a hold between threads of one client. The hand-off case asserts the
     * answer both ways, so a store that stops declaring its room fails it. A store that cannot reserve
     * room (its tokens leave no gap between grants) overrides this to return false.
     *
     * @return true by default
     */
    protected boolean reservesTokenRoom() {
        return true;
    }

    /**
     * Whether a hold outlives the client that took it when the client closes without releasing it (a
     * minimum hold, {@code Lease.closeAfter}): true for stores with a time to live; stores whose holds
     * live only as long as the client's session (ZooKeeper, etcd) override this to return false.
     *
     * @return true by default
     */
    protected boolean holdsOutliveTheirClient() {
        return true;
    }

    /**
     * How the store loses every grant it made, as a server restarted without persistence does, or null
     * when this test has no such fault for its store. When given, the property test of {@link FuzzCases}
     * adds the loss to its random steps, and its invariant (no two conflicting holds valid at once) then
     * checks that the store holds grants back until every forgotten lease has run out. The default: none.
     *
     * @return the fault, or null
     */
    protected Runnable storeLosesItsState() {
        return null;
    }

    /**
     * Makes a client behave like a crashed process for the rest of the test: it stops talking to the
     * store without releasing anything or leaving any queue. The default cuts the client off with a
     * {@link FreezableBackend}; a backend whose store keeps entries alive for a live connection (a
     * ZooKeeper session) overrides this to also end that connection.
     *
     * @param client the client to "crash"
     * @throws Exception if the crash could not be simulated
     */
    protected void simulateCrash(LockClient client) throws Exception {
        freezable.get(client).freeze();
    }

    @BeforeEach
    void newNamespace() {
        namespace = "tck" + Long.toHexString(ThreadLocalRandom.current().nextLong() & 0xffffffffL);
    }

    @AfterEach
    void closeClients() {
        for (LockClient c : clients) {
            c.close();
        }
        clients.clear();
        freezable.clear();
    }

    /**
     * A new client in this test's namespace.
     *
     * @return a client closed after the test
     */
    protected final LockClient client() {
        return client(b -> {});
    }

    /**
     * The local hand-off bound every client of the suite starts with, from {@code
     * -Ddlock.tck.handoff=PASSES,MILLIS} (e.g. {@code 1000,10000}: long chains stay local); absent, the
     * client default. A case that sets its own bound keeps it.
     */
    private static final Optional<HandoffBound> HANDOFF = HandoffBound.fromProperty("dlock.tck.handoff");

    /** A local hand-off bound: at most {@code passes} passes within {@code time}. */
    record HandoffBound(int passes, Duration time) {
        static Optional<HandoffBound> fromProperty(String property) {
            String value = System.getProperty(property);
            if (value == null || value.isBlank()) {
                return Optional.empty();
            }
            String[] parts = value.split(",");
            try {
                if (parts.length != 2) {
                    throw new NumberFormatException("two numbers expected");
                }
                return Optional.of(new HandoffBound(
                        Integer.parseInt(parts[0].trim()), Duration.ofMillis(Long.parseLong(parts[1].trim()))));
            } catch (NumberFormatException e) {
                throw new IllegalArgumentException(
                        "-D" + property + " must be PASSES,MILLIS (e.g. 1000,10000), got '" + value + "'", e);
            }
        }
    }

    /**
     * A new client in this test's namespace, with extra options.
     *
     * @param options changes to the builder
     * @return a client closed after the test
     */
    protected final LockClient client(Consumer<LockClient.Builder> options) {
        AtomicReference<FreezableBackend> wrapper = new AtomicReference<>();
        LockClient.Builder b = newClientBuilder().namespace(namespace).operationTimeout(operationTimeout());
        HANDOFF.ifPresent(bound -> b.localHandoff(bound.passes(), bound.time()));
        b.backend(b.backend().andThen(backend -> {
            wrapper.set(new FreezableBackend(backend));
            return wrapper.get();
        }));
        options.accept(b);
        LockClient c = b.build();
        clients.add(c);
        freezable.put(c, wrapper.get());
        return c;
    }

    /** The backend under a client of this test, to freeze, slow down or fail its calls. */
    final FreezableBackend wire(LockClient client) {
        return freezable.get(client);
    }

    /** This test's namespace. */
    final String namespace() {
        return namespace;
    }

    // ------------------------------------------------------------------ the sections

    /** Exclusive locks: one holder, release, names and namespaces. */
    @Nested
    class Exclusive extends ExclusiveCases {
        Exclusive() {
            super(LockContractTest.this);
        }
    }

    /** The {@code Lock} view: reentrancy, thread ownership, re-entry into a hold that is gone. */
    @Nested
    class Reentrancy extends ReentrancyCases {
        Reentrancy() {
            super(LockContractTest.this);
        }
    }

    /** Timed waits, interrupts, wake-ups and asynchronous acquisition. */
    @Nested
    class Waiting extends WaitingCases {
        Waiting() {
            super(LockContractTest.this);
        }
    }

    /** Fair locks: arrival order, dead and cancelled waiters. */
    @Nested
    class Fair extends FairCases {
        Fair() {
            super(LockContractTest.this);
        }
    }

    /** Read-write locks: sharing, exclusion, no starvation, downgrade, upgrade. */
    @Nested
    class ReadWrite extends ReadWriteCases {
        ReadWrite() {
            super(LockContractTest.this);
        }
    }

    /** Semaphores: never more holders than permits. */
    @Nested
    class Semaphore extends SemaphoreCases {
        Semaphore() {
            super(LockContractTest.this);
        }
    }

    /** Multi-locks: all or nothing, no deadlock, no expired part. */
    @Nested
    class MultiLock extends MultiLockCases {
        MultiLock() {
            super(LockContractTest.this);
        }
    }

    /** Leases and fencing tokens: expiry, renewal, extension, late answers. */
    @Nested
    class Leases extends LeaseCases {
        Leases() {
            super(LockContractTest.this);
        }
    }

    /** Lost leases and listeners. */
    @Nested
    class LostLeases extends LostLeaseCases {
        LostLeases() {
            super(LockContractTest.this);
        }
    }

    /** Inspection and administration: held leases, describe, list, forceRelease. */
    @Nested
    class Inspection extends InspectionCases {
        Inspection() {
            super(LockContractTest.this);
        }
    }

    /** Closing a client. */
    @Nested
    class ClientLifecycle extends ClientLifecycleCases {
        ClientLifecycle() {
            super(LockContractTest.this);
        }
    }

    /** Bad input, refused with a clear message. */
    @Nested
    class BadInput extends BadInputCases {
        BadInput() {
            super(LockContractTest.this);
        }
    }

    /** The local queue: its limit and the hand-off between threads of one client. */
    @Nested
    class LocalQueue extends LocalQueueCases {
        LocalQueue() {
            super(LockContractTest.this);
        }
    }

    /** Hand-off when the store took the hold back: no pass beside a newer holder, every holder told. */
    @Nested
    class HandOffSafety extends HandOffSafetyCases {
        HandOffSafety() {
            super(LockContractTest.this);
        }
    }

    /** Messages the client gave up on never act on a later grant. */
    @Nested
    class LateMessages extends LateMessageCases {
        LateMessages() {
            super(LockContractTest.this);
        }
    }

    /** Faults: the store down, calls that never answer, a release that fails. */
    @Nested
    class Faults extends FaultCases {
        Faults() {
            super(LockContractTest.this);
        }
    }

    /** Leader election: one leader at a time, increasing terms, resign hands over. */
    @Nested
    class Election extends ElectionCases {
        Election() {
            super(LockContractTest.this);
        }
    }

    /** Requests lost in transit: a release, a cancelled wait, a late grant's give-back. */
    @Nested
    class LostRequests extends LostRequestCases {
        LostRequests() {
            super(LockContractTest.this);
        }
    }

    /** Minimum holds: a lease closed with a delay stays held until then. */
    @Nested
    class MinimumHold extends MinimumHoldCases {
        MinimumHold() {
            super(LockContractTest.this);
        }
    }

    /** Fuzz: random schedules with exact totals, random operation sequences. */
    @Nested
    class Fuzz extends FuzzCases {
        Fuzz() {
            super(LockContractTest.this);
        }
    }
}
