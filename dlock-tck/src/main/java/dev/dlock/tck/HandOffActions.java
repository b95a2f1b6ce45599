package dev.dlock.tck;

import dev.dlock.Lease;
import dev.dlock.LockBackendException;
import dev.dlock.LockClient;
import dev.dlock.LockTimeoutException;
import dev.dlock.spi.Mode;
import java.time.Duration;
import java.util.List;
import java.util.concurrent.CompletableFuture;
import net.jqwik.api.Arbitraries;
import net.jqwik.api.Arbitrary;
import net.jqwik.api.Combinators;
import net.jqwik.api.state.Action;
import net.jqwik.api.state.Transformer;

/**
 * The actions of {@link StatefulLockProperties} that end a hold while a thread of its own client waits for
 * it, so that the engine may pass the hold on without the store: a plain release, and one after an
 * operator's force-release (with another client perhaps granted by the store meanwhile). What the waiter
 * gets is checked as every grant is ({@link LockWorld#granted}).
 */
final class HandOffActions {
    private HandOffActions() {}

    /**
     * Cohort hand-off: another caller of the same client waits for a hold (exclusive or write) when it is
     * released, so the engine may pass the hold on without the store; its lease must be valid and its
     * token above every earlier one. The waiter's wait is drawn too, so a pass may meet a wait that is
     * just ending.
     */
    static Action.Dependent<LockWorld> releaseToALocalWaiter() {
        return new Action.Dependent<>() {
            @Override
            public boolean precondition(LockWorld w) {
                return w.held.stream().anyMatch(HandOffActions::passable);
            }

            @Override
            public Arbitrary<Transformer<LockWorld>> transformer(LockWorld w) {
                List<LockWorld.Held> passable =
                        w.held.stream().filter(HandOffActions::passable).toList();
                return Combinators.combine(Arbitraries.of(passable), Arbitraries.of(5, 40, 300))
                        .as((h, waitMillis) -> Transformer.mutate(
                                "release " + h + " while its client waits " + waitMillis + "ms for it", world -> {
                                    if (!world.held.remove(h)) {
                                        return;
                                    }
                                    releaseWithALocalWaiter(world, h, waitMillis);
                                }));
            }
        };
    }

    /**
     * An operator force-releases a hold its client is about to pass on; another client may take the lock
     * from the store meanwhile; then a thread of the holder's client asks for it (after the force-release)
     * and the holder releases. A pass must not make a second valid holder beside the store's new grant.
     */
    static Action.Dependent<LockWorld> forceReleaseInAChain() {
        return new Action.Dependent<>() {
            @Override
            public boolean precondition(LockWorld w) {
                return w.held.stream().anyMatch(HandOffActions::passable);
            }

            @Override
            public Arbitrary<Transformer<LockWorld>> transformer(LockWorld w) {
                List<LockWorld.Held> passable =
                        w.held.stream().filter(HandOffActions::passable).toList();
                return Combinators.combine(
                                Arbitraries.of(passable), Arbitraries.of(true, false), Arbitraries.of(40, 300))
                        .as((h, rivalTakesIt, waitMillis) -> Transformer.mutate(
                                "force-release " + h + (rivalTakesIt ? ", another client takes it" : "")
                                        + ", then its client waits " + waitMillis + "ms behind its release",
                                world -> {
                                    if (!world.held.contains(h)) {
                                        return;
                                    }
                                    world.forceReleased(h.name);
                                    world.client(0).forceRelease(h.name);
                                    if (rivalTakesIt) {
                                        int rival = (h.client + 1) % 3;
                                        try {
                                            Lease lease = StatefulLockProperties.leaseApi(
                                                            world.client(rival), h.name, h.mode)
                                                    .apply(Duration.ZERO);
                                            world.granted(new LockWorld.Held(
                                                    rival, h.name, h.mode, List.of(lease), lease::close));
                                        } catch (LockTimeoutException | LockBackendException busyOrSlow) {
                                            world.note(
                                                    "client " + rival + " did not get " + h.name + ": " + busyOrSlow);
                                        }
                                    }
                                    world.held.remove(h);
                                    releaseWithALocalWaiter(world, h, waitMillis);
                                }));
            }
        };
    }

    /** A thread of the hold's client asks for it, then the hold is released: the pass, if any, is checked. */
    private static void releaseWithALocalWaiter(LockWorld world, LockWorld.Held h, int waitMillis) {
        LockClient c = world.client(h.client);
        CompletableFuture<Lease> waiter = (h.mode == Mode.WRITE
                        ? c.readWriteLock(h.name).writeLock()
                        : c.lock(h.name))
                .acquireAsync(Duration.ofMillis(waitMillis));
        StatefulLockProperties.sleep(2); // the waiter is queued behind the hold
        boolean answered = world.release(h);
        try {
            Lease lease = waiter.join();
            if (!answered && !lease.isValid()) {
                // The release waited the operation timeout for its answer, longer than an unrenewed lease.
                world.note("local waiter's lease " + lease + " ran out while the release waited for its answer");
                lease.close();
                return;
            }
            world.granted(new LockWorld.Held(h.client, h.name, h.mode, List.of(lease), lease::close));
        } catch (java.util.concurrent.CompletionException notGranted) {
            world.note("local waiter for " + h + " did not get it: " + notGranted);
        }
    }

    private static boolean passable(LockWorld.Held h) {
        return (h.mode == Mode.EXCLUSIVE || h.mode == Mode.WRITE) && h.leases.size() == 1 && !h.forced;
    }
}
