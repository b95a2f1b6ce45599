package dev.dlock.tck;

import static org.assertj.core.api.Assertions.assertThat;

import dev.dlock.Lease;
import dev.dlock.LeaseLostException;
import dev.dlock.LockBackendException;
import dev.dlock.LockClient;
import dev.dlock.spi.Mode;
import java.time.Duration;
import java.util.ArrayList;
import java.util.Arrays;
import java.util.HashMap;
import java.util.IdentityHashMap;
import java.util.List;
import java.util.Map;
import java.util.Set;
import java.util.concurrent.ConcurrentHashMap;
import java.util.function.Supplier;

/**
 * The state of one run of {@link StatefulLockProperties}: three clients of the store under test, the holds
 * they believe they have, and the invariants those holds must keep after every step.
 *
 * <p>Design: every step runs on the property's one thread, so grants are observed in the order the store
 * made them, and a hold is checked only once the caller has it. Client 0 and 1 renew their leases, client
 * 2 does not (its leases expire while held); each client's backend is wrapped in a {@link
 * FreezableBackend} so a step can slow its answers down.
 *
 * <p>Invariants: no two conflicting holds both report {@link Lease#isValid()} (a hold taken away by an
 * admin force-release is exempt: its holder learns it at the next renewal); per name and kind, every
 * exclusive grant (lock, fair, write, multi-lock part) has a token above every token granted before, and
 * every shared grant (read, permit) a token above the last exclusive one; a closed client holds nothing.
 */
final class LockWorld {
    static final List<String> NAMES = List.of("a", "b");
    static final int PERMITS = 2;

    /** One hold as its caller sees it: the leases it relies on and how to give them back. */
    static final class Held {
        final int client;
        final String name;
        final Mode mode;
        final List<Lease> leases;
        final Runnable release;
        boolean forced;

        Held(int client, String name, Mode mode, List<Lease> leases, Runnable release) {
            this.client = client;
            this.name = name;
            this.mode = mode;
            this.leases = leases;
            this.release = release;
        }

        @Override
        public String toString() {
            return "client " + client + " " + mode + " '" + name + "' " + leases + (forced ? " (forced)" : "");
        }
    }

    final Duration lease;
    private final Duration operationTimeout;
    /** The modes the store offers; the final check probes only those. */
    private final List<Mode> modes;

    private final Supplier<LockClient.Builder> builders;
    private final String namespace;
    private final LockClient[] clients = new LockClient[3];
    private final FreezableBackend[] wires = new FreezableBackend[3];
    final List<Held> held = new ArrayList<>();
    private final Map<String, Long> lastToken = new HashMap<>();
    private final Map<String, Long> lastExclusiveToken = new HashMap<>();
    private final List<String> log = new ArrayList<>();

    LockWorld(
            Supplier<LockClient.Builder> builders,
            Duration lease,
            Duration operationTimeout,
            List<Mode> modes,
            String namespace) {
        this.builders = builders;
        this.modes = modes;
        this.lease = lease;
        this.operationTimeout = operationTimeout;
        this.namespace = namespace;
        for (int i = 0; i < clients.length; i++) {
            open(i);
        }
    }

    /** Every client a world of this JVM opened and did not close yet ({@link #closeAllOpen}). */
    private static final Set<LockClient> OPEN = ConcurrentHashMap.newKeySet();

    /** Closes every client a world opened and did not close (a run that failed on the way), quietly. */
    static void closeAllOpen() {
        for (LockClient c : List.copyOf(OPEN)) {
            try {
                c.close();
            } catch (RuntimeException ignored) {
                // a store that fails on close: its leases expire by their lease time
            }
            OPEN.remove(c);
        }
    }

    private void open(int i) {
        LockClient.Builder b =
                builders.get().namespace(namespace).leaseTime(lease).renewal(i != 2);
        clients[i] = b.backend(b.backend().andThen(backend -> wires[i] = new FreezableBackend(backend)))
                .build();
        OPEN.add(clients[i]);
    }

    LockClient client(int i) {
        return clients[i];
    }

    void delay(int i, Duration answerDelay) {
        wires[i].delayAnswers(answerDelay);
    }

    /** The answer to client {@code i}'s next call of a kind comes half a second past the operation timeout. */
    void answerNextLate(int i, FreezableBackend.Call call) {
        wires[i].delayNextAnswer(call, operationTimeout.plusMillis(500));
    }

    /** A wait that ends a second after the operation timeout. */
    Duration pastTheOperationTimeout() {
        return operationTimeout.plusSeconds(1);
    }

    /**
     * Releases a hold taken out of {@link #held}; a release that says the lease was lost, or that the
     * store did not answer in time (the engine retries it), is noted.
     *
     * @return false if the store did not answer in time: the call took the operation timeout
     */
    boolean release(Held h) {
        try {
            h.release.run();
        } catch (LeaseLostException lost) {
            note("release of " + h + ": " + lost.getMessage());
        } catch (LockBackendException slow) {
            note("release of " + h + ": " + slow.getMessage());
            return false;
        }
        return true;
    }

    /** Closes a client and opens a new one in its place; the closed client's holds must be gone at once. */
    void reopen(int i) {
        clients[i].close();
        for (Held h : List.copyOf(held)) {
            if (h.client == i) {
                for (Lease l : h.leases) {
                    assertThat(l.isValid()).as("%s after its client closed", h).isFalse();
                }
                held.remove(h);
            }
        }
        open(i);
    }

    /** Records a new grant, checking its fencing tokens against the grants before it. */
    void granted(Held h) {
        String kind = h.name + "/" + h.mode.kind().tag();
        boolean exclusive = h.mode != Mode.READ && h.mode != Mode.PERMIT;
        for (Lease l : h.leases) {
            assertThat(l.isValid()).as("a lease just handed out: %s", h).isTrue();
            String partKind =
                    h.leases.size() > 1 ? l.name() + "/" + h.mode.kind().tag() : kind;
            long token = l.fencingToken();
            long floor = exclusive
                    ? lastToken.getOrDefault(partKind, Long.MIN_VALUE)
                    : lastExclusiveToken.getOrDefault(partKind, Long.MIN_VALUE);
            assertThat(token)
                    .as("token of %s must exceed every earlier %s token", h, exclusive ? "" : "exclusive")
                    .isGreaterThan(floor);
            lastToken.merge(partKind, token, Math::max);
            if (exclusive) {
                lastExclusiveToken.put(partKind, token);
            }
        }
        log.add("granted " + h);
        held.add(h);
    }

    void forceReleased(String name) {
        for (Held h : held) {
            if (h.name.equals(name) || h.leases.stream().anyMatch(l -> l.name().equals(name))) {
                h.forced = true;
            }
        }
    }

    /** The invariant checked after every step. */
    void check() {
        // One isValid() per lease: a lease that is invalid never becomes valid again, so two leases seen
        // valid here were both valid when the check began.
        Map<Lease, Boolean> valid = new IdentityHashMap<>();
        Map<String, Map<Lease, Held>> byResource = new HashMap<>();
        for (Held h : held) {
            if (h.forced) {
                continue;
            }
            for (Lease l : h.leases) {
                if (valid.computeIfAbsent(l, Lease::isValid)) {
                    String resource = (h.leases.size() > 1 ? l.name() : h.name) + "/"
                            + h.mode.kind().tag();
                    byResource
                            .computeIfAbsent(resource, k -> new IdentityHashMap<>())
                            .putIfAbsent(l, h);
                }
            }
        }
        for (Map.Entry<String, Map<Lease, Held>> e : byResource.entrySet()) {
            List<Held> holders = new ArrayList<>(e.getValue().values());
            String kind = e.getKey().substring(e.getKey().indexOf('/') + 1);
            boolean anyWriter = holders.stream().anyMatch(h -> h.mode == Mode.WRITE);
            int allowed = kind.equals("sem") ? PERMITS : kind.equals("rw") && !anyWriter ? Integer.MAX_VALUE : 1;
            assertThat(holders.size())
                    .as("valid holders of %s: %s (history: %s)", e.getKey(), holders, log)
                    .isLessThanOrEqualTo(allowed);
        }
    }

    void note(String step) {
        log.add(step);
    }

    private void awaitNoHeldLeases(LockClient c) {
        long deadline = System.nanoTime() + lease.toNanos();
        while (!c.heldLeases().isEmpty() && System.nanoTime() - deadline < 0) {
            try {
                Thread.sleep(5);
            } catch (InterruptedException e) {
                Thread.currentThread().interrupt();
                break;
            }
        }
        assertThat(c.heldLeases())
                .as("leases still held after every hold was released (history: %s)", log)
                .isEmpty();
    }

    /**
     * Ends the run: releases what is held, closes every client, and checks with a fresh client that
     * nothing is left held or queued in the store.
     */
    void closeAndCheckNothingLeft(Supplier<LockClient.Builder> fresh) {
        for (Held h : List.copyOf(held)) {
            try {
                h.release.run();
            } catch (RuntimeException ignored) {
                // A lease lost or released on the way: closing the client settles it.
            }
        }
        try {
            for (LockClient c : clients) {
                // A grant whose caller cancelled at the moment it arrived is listed until the engine has
                // given it back (a thread hop away); it must go, but need not be gone at this instant.
                awaitNoHeldLeases(c);
            }
        } finally {
            Arrays.stream(clients)
                    .forEach(LockClient::close); // also when a check failed, so no client outlives the run
        }
        try (LockClient probe = fresh.get()
                .namespace(namespace)
                .leaseTime(lease)
                .waitTime(lease)
                .build()) {
            Duration wait = lease.multipliedBy(2);
            for (String name : NAMES) {
                // Renewing leases were released; the others expire within one lease time at most.
                List<Lease> free = new ArrayList<>(List.of(probe.lock(name).acquire(wait)));
                if (modes.contains(Mode.FAIR)) {
                    free.add(probe.fairLock(name).acquire(wait));
                }
                free.add(probe.readWriteLock(name).writeLock().acquire(wait));
                for (int i = 0; modes.contains(Mode.PERMIT) && i < PERMITS; i++) {
                    free.add(probe.semaphore(name, PERMITS).acquire(wait));
                }
                free.forEach(Lease::close);
            }
        }
    }
}
