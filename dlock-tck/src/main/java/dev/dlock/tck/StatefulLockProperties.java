package dev.dlock.tck;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;

import dev.dlock.DistributedLock;
import dev.dlock.DistributedReadWriteLock;
import dev.dlock.Lease;
import dev.dlock.LeaseLostException;
import dev.dlock.LockBackendException;
import dev.dlock.LockClient;
import dev.dlock.LockTimeoutException;
import dev.dlock.spi.Mode;
import java.time.Duration;
import java.util.List;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.ThreadLocalRandom;
import java.util.function.BiConsumer;
import java.util.function.Supplier;
import net.jqwik.api.Arbitraries;
import net.jqwik.api.Arbitrary;
import net.jqwik.api.Combinators;
import net.jqwik.api.ForAll;
import net.jqwik.api.Property;
import net.jqwik.api.Provide;
import net.jqwik.api.state.Action;
import net.jqwik.api.state.ActionChain;
import net.jqwik.api.state.ActionChainArbitrary;
import net.jqwik.api.state.Transformer;

/**
 * A stateful property-based test of the lock contract: random sequences of operations by three clients
 * (lease and {@code Lock} views, timed waits, async acquires cancelled at random moments, re-entry,
 * downgrade, upgrade attempts, semaphores, multi-locks, extend, admin force-release, client close,
 * pauses, and answers from the store slowed down at random), with {@link LockWorld#check()} after every
 * step. jqwik shrinks a failing sequence to a minimal one and prints it.
 *
 * <p>It runs inside the contract suite ({@code LockContractTest.Fuzz.randomOperationSequencesKeepEveryInvariant}),
 * which starts it through the JUnit Platform with the store under test set in {@link #target}; so every
 * store runs it with its own server setup. The number of tries comes from {@code jqwik.tries.default}.
 */
public class StatefulLockProperties {
    /** The store under test: builders of its clients, and the lease time to use. Set by the suite. */
    record Target(
            Supplier<LockClient.Builder> builders,
            Duration lease,
            Duration operationTimeout,
            List<Mode> modes,
            Runnable storeLosesItsState) {}

    static volatile Target target;

    /** For the JUnit Platform. */
    public StatefulLockProperties() {}

    /**
     * Runs one random sequence and then checks that nothing is left held or queued.
     *
     * @param chain the sequence jqwik generated
     */
    @Property(shrinking = net.jqwik.api.ShrinkingMode.BOUNDED)
    void randomOperationsKeepTheInvariants(@ForAll("sequences") ActionChain<LockWorld> chain) {
        Target t = target;
        try {
            LockWorld world =
                    chain.withInvariant("lock invariants", LockWorld::check).run();
            world.closeAndCheckNothingLeft(t.builders());
        } finally {
            // A run that failed never reached the check above: its clients are closed here, so the threads of
            // the runs jqwik makes while shrinking do not outlive them (later cases count threads).
            LockWorld.closeAllOpen();
        }
    }

    @Provide
    Arbitrary<ActionChain<LockWorld>> sequences() {
        Target t = target;
        ActionChainArbitrary<LockWorld> chain = ActionChain.<LockWorld>startWith(() -> new LockWorld(
                        t.builders(),
                        t.lease(),
                        t.operationTimeout(),
                        t.modes(),
                        "pbt" + Long.toHexString(ThreadLocalRandom.current().nextLong())))
                .withAction(4, acquire(t.modes()))
                .withAction(3, release())
                .withAction(1, asyncAcquireThenCancel())
                .withAction(2, HandOffActions.releaseToALocalWaiter())
                .withAction(1, extend())
                .withAction(1, reentry())
                .withAction(1, downgrade())
                .withAction(1, upgradeAttempt())
                .withAction(1, multiLock())
                .withAction(1, forceRelease())
                .withAction(1, HandOffActions.forceReleaseInAChain())
                .withAction(1, closeClient())
                .withAction(1, pause())
                .withAction(1, slowAnswers())
                .withAction(1, lateAnswer())
                .withMaxTransformations(20);
        return t.storeLosesItsState() == null ? chain : chain.withAction(1, storeLosesItsState(t.storeLosesItsState()));
    }

    private static Arbitrary<Integer> clients() {
        return Arbitraries.integers().between(0, 2);
    }

    private static Arbitrary<String> names() {
        return Arbitraries.of(LockWorld.NAMES);
    }

    private static Arbitrary<Duration> waits() {
        return Arbitraries.of(Duration.ZERO, Duration.ofMillis(50), Duration.ofMillis(300));
    }

    private static Action.Independent<LockWorld> acquire(List<Mode> offered) {
        Arbitrary<Mode> modes = Arbitraries.of(offered);
        return () -> Combinators.combine(clients(), names(), modes, waits())
                .as((c, name, mode, wait) -> Transformer.mutate(
                        "client " + c + " acquires " + mode + " '" + name + "' within " + wait, w -> {
                            try {
                                Lease lease = leaseApi(w.client(c), name, mode).apply(wait);
                                w.granted(new LockWorld.Held(c, name, mode, List.of(lease), lease::close));
                            } catch (LockTimeoutException | LockBackendException busyOrSlow) {
                                w.note("client " + c + " did not get " + mode + " '" + name + "': " + busyOrSlow);
                            }
                        }));
    }

    interface Acquirer {
        Lease apply(Duration wait);
    }

    static Acquirer leaseApi(LockClient client, String name, Mode mode) {
        return switch (mode) {
            case EXCLUSIVE -> client.lock(name)::acquire;
            case FAIR -> client.fairLock(name)::acquire;
            case READ -> client.readWriteLock(name).readLock()::acquire;
            case WRITE -> client.readWriteLock(name).writeLock()::acquire;
            case PERMIT -> client.semaphore(name, LockWorld.PERMITS)::acquire;
        };
    }

    private static Action.Dependent<LockWorld> release() {
        return onAHold("release", (world, i) -> {
            world.release(world.held.remove(i.intValue()));
        });
    }

    /** An action on one of the holds, drawn among those held when the step is generated. */
    private static Action.Dependent<LockWorld> onAHold(String verb, BiConsumer<LockWorld, Integer> step) {
        return new Action.Dependent<>() {
            @Override
            public boolean precondition(LockWorld w) {
                return !w.held.isEmpty();
            }

            @Override
            public Arbitrary<Transformer<LockWorld>> transformer(LockWorld w) {
                return Arbitraries.integers()
                        .between(0, w.held.size() - 1)
                        .map(i -> Transformer.mutate(verb + " hold #" + i, world -> step.accept(world, i)));
            }
        };
    }

    private static Action.Independent<LockWorld> asyncAcquireThenCancel() {
        Arbitrary<Integer> cancelAfterMillis = Arbitraries.of(0, 3, 40);
        return () -> Combinators.combine(clients(), names(), cancelAfterMillis)
                .as((c, name, after) -> Transformer.mutate(
                        "client " + c + " acquires '" + name + "' async and cancels after " + after + "ms", w -> {
                            CompletableFuture<Lease> f = w.client(c).lock(name).acquireAsync(Duration.ofMillis(200));
                            sleep(after);
                            if (!f.cancel(false) && !f.isCompletedExceptionally()) {
                                Lease lease = f.join();
                                w.granted(new LockWorld.Held(c, name, Mode.EXCLUSIVE, List.of(lease), lease::close));
                            }
                        }));
    }

    private static Action.Dependent<LockWorld> extend() {
        return onAHold("extend", (world, i) -> {
            for (Lease lease : world.held.get(i).leases) {
                try {
                    lease.extend(world.lease);
                    assertThat(lease.isValid())
                            .as("a lease extend() returned for")
                            .isTrue();
                } catch (LeaseLostException | LockBackendException goneOrSlow) {
                    world.note("extend: " + goneOrSlow.getMessage());
                }
            }
        });
    }

    private static Action.Independent<LockWorld> reentry() {
        return () -> Combinators.combine(clients(), names(), Arbitraries.of(0, 1700), Arbitraries.of(false, true))
                .as((c, name, pauseMillis, closeFirst) -> Transformer.mutate(
                        "client " + c + " locks '" + name + "' twice (Lock view), " + pauseMillis + "ms apart"
                                + (closeFirst ? ", closing its lease in between" : ""),
                        w -> {
                            DistributedLock lock = w.client(c).lock(name);
                            if (lock.isHeldByCurrentThread() || !tryLock(lock)) {
                                return;
                            }
                            Lease lease = lock.currentLease().orElseThrow();
                            w.granted(new LockWorld.Held(c, name, Mode.EXCLUSIVE, List.of(lease), lock::unlock));
                            sleep(pauseMillis);
                            if (closeFirst) {
                                try {
                                    lease.close();
                                } catch (LockBackendException slow) {
                                    w.note("close of " + lease + ": " + slow.getMessage()); // retried by the engine
                                }
                            }
                            boolean validBefore = lease.isValid();
                            try {
                                assertThat(tryLock(lock)).as("re-entry").isTrue();
                                assertThat(validBefore)
                                        .as("re-entry into a lease already gone")
                                        .isTrue();
                                unlock(w, lock);
                            } catch (LeaseLostException gone) {
                                assertThat(lease.isValid())
                                        .as("re-entry refused only for a gone lease")
                                        .isFalse();
                            }
                        }));
    }

    private static Action.Independent<LockWorld> downgrade() {
        return () -> Combinators.combine(clients(), names())
                .as((c, name) -> Transformer.mutate("client " + c + " downgrades '" + name + "' write -> read", w -> {
                    DistributedReadWriteLock rw = w.client(c).readWriteLock(name);
                    if (heldByThisThread(rw) || !tryLock(rw.writeLock())) {
                        return;
                    }
                    Lease write = rw.writeLock().currentLease().orElseThrow();
                    w.granted(new LockWorld.Held(c, name, Mode.WRITE, List.of(write), () -> {}));
                    boolean read = tryLock(rw.readLock());
                    w.held.removeIf(h -> h.leases.contains(write));
                    // The read is checked as handed out before the write is unlocked: client 2 does not renew,
                    // and an unlock whose answer comes late (lateAnswer) takes the operation timeout, long
                    // enough for its unrenewed read lease to run out, which is no broken promise.
                    if (read) {
                        Lease lease = rw.readLock().currentLease().orElseThrow();
                        w.granted(new LockWorld.Held(c, name, Mode.READ, List.of(lease), rw.readLock()::unlock));
                    }
                    unlock(w, rw.writeLock());
                }));
    }

    private static Action.Independent<LockWorld> upgradeAttempt() {
        return () -> Combinators.combine(clients(), names())
                .as((c, name) -> Transformer.mutate("client " + c + " tries read -> write on '" + name + "'", w -> {
                    DistributedReadWriteLock rw = w.client(c).readWriteLock(name);
                    if (heldByThisThread(rw) || !tryLock(rw.readLock())) {
                        return;
                    }
                    Lease lease = rw.readLock().currentLease().orElseThrow();
                    w.granted(new LockWorld.Held(c, name, Mode.READ, List.of(lease), rw.readLock()::unlock));
                    assertThatThrownBy(() -> rw.writeLock().tryLock()).isInstanceOf(IllegalMonitorStateException.class);
                }));
    }

    private static Action.Independent<LockWorld> multiLock() {
        return () -> Combinators.combine(clients(), waits())
                .as((c, wait) -> Transformer.mutate("client " + c + " takes the multi-lock within " + wait, w -> {
                    try {
                        Lease multi = w.client(c).multiLock(LockWorld.NAMES).acquire(wait);
                        assertThat(multi.parts()).allMatch(Lease::isValid);
                        w.granted(new LockWorld.Held(c, "a,b", Mode.EXCLUSIVE, multi.parts(), multi::close));
                    } catch (LockTimeoutException | LockBackendException busyOrSlow) {
                        w.note("multi-lock: " + busyOrSlow.getMessage());
                    }
                }));
    }

    private static Action.Independent<LockWorld> forceRelease() {
        return () -> names().map(name -> Transformer.mutate("admin force-releases '" + name + "'", w -> {
            w.forceReleased(name);
            w.client(0).forceRelease(name);
        }));
    }

    /**
     * The store forgets every grant (a restart without persistence). The holders still believe they hold
     * until a renewal tells them, so the invariant fails if the store grants anyone else meanwhile.
     */
    private static Action.Independent<LockWorld> storeLosesItsState(Runnable fault) {
        return () -> Arbitraries.just(Transformer.mutate("the store forgets every grant", w -> fault.run()));
    }

    private static Action.Independent<LockWorld> closeClient() {
        return () -> clients().map(c -> Transformer.mutate("client " + c + " closes", w -> w.reopen(c)));
    }

    private static Action.Independent<LockWorld> pause() {
        return () -> Arbitraries.of(10, 100, 700, 1600)
                .map(percentOfLease -> Transformer.mutate("pause " + percentOfLease / 10 + "% of a lease", w -> {
                    sleep(w.lease.toMillis() * percentOfLease / 1000);
                }));
    }

    private static Action.Independent<LockWorld> slowAnswers() {
        return () -> Combinators.combine(clients(), Arbitraries.of(0, 2, 20, 80, 1600))
                .as((c, millis) -> Transformer.mutate(
                        "client " + c + " gets answers " + millis + "ms late",
                        w -> w.delay(c, Duration.ofMillis(millis))));
    }

    /**
     * The answer to one call of a client (its next acquire, release, renewal or queue exit) comes after
     * the operation timeout: the store acted on it, the engine gave up on it. Then the client waits for a
     * lock longer than the operation timeout, so an acquire answered late fails by that timeout, not by
     * the wait's deadline. What a late answer brings must be undone (a grant given back) or must not matter
     * (a release retried), and no later grant may be disturbed by it.
     */
    private static Action.Independent<LockWorld> lateAnswer() {
        return () -> Combinators.combine(clients(), names(), Arbitraries.of(FreezableBackend.Call.values()))
                .as((c, name, call) -> Transformer.mutate(
                        "client " + c + "'s next " + call + " is answered after the operation timeout; it waits for '"
                                + name + "' past that timeout",
                        w -> {
                            w.answerNextLate(c, call);
                            try {
                                Lease lease = w.client(c).lock(name).acquire(w.pastTheOperationTimeout());
                                w.granted(new LockWorld.Held(c, name, Mode.EXCLUSIVE, List.of(lease), lease::close));
                            } catch (LockTimeoutException | LockBackendException busyOrLate) {
                                w.note("client " + c + " did not get '" + name + "': " + busyOrLate);
                            }
                        }));
    }

    private static boolean heldByThisThread(DistributedReadWriteLock rw) {
        return rw.readLock().isHeldByCurrentThread() || rw.writeLock().isHeldByCurrentThread();
    }

    /** Unlocks; a release the store did not answer in time is retried by the engine, and noted here. */
    private static void unlock(LockWorld w, DistributedLock lock) {
        try {
            lock.unlock();
        } catch (LockBackendException slow) {
            w.note("unlock: " + slow.getMessage());
        }
    }

    private static boolean tryLock(DistributedLock lock) {
        try {
            return lock.tryLock(50, java.util.concurrent.TimeUnit.MILLISECONDS);
        } catch (InterruptedException e) {
            Thread.currentThread().interrupt();
            throw new IllegalStateException(e);
        } catch (LockBackendException slow) {
            return false;
        }
    }

    static void sleep(long millis) {
        try {
            Thread.sleep(millis);
        } catch (InterruptedException e) {
            Thread.currentThread().interrupt();
            throw new IllegalStateException(e);
        }
    }
}
