package dev.dlock.chaos;

import java.util.ArrayList;
import java.util.List;
import java.util.Random;
import java.util.Set;
import java.util.concurrent.ConcurrentHashMap;
import java.util.concurrent.Executors;
import java.util.concurrent.ScheduledExecutorService;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.atomic.AtomicInteger;
import java.util.concurrent.atomic.AtomicReference;

/**
 * Injects faults at random: every 0.3 to 1.5 s it takes the next of the enabled faults (all of them in a
 * shuffled order, then again in another, so that even a short run sees many kinds) and a target that is
 * not already hit, until the wanted number of faults has been injected. Up to {@code maxConcurrent}
 * faults are in effect at once (a client paused while the store is killed, two clients partitioned),
 * at most one on the store. Each fault heals itself after its duration on a timer thread.
 *
 * <p>Durations, with L the lease time: pause and partition 1.5 to 3 L (past the lease); client clock
 * stepped 2 to 4 L forward or back for 1.5 to 3 L; killed client restarted after 0.3 to 1.5 s; store
 * faults 1 to 4 s; a Sentinel failover leaves the store alone for 5 s.
 *
 * <p>Failure modes: a fault that cannot be injected or healed (a store that does not restart) stops
 * the run with that error; it is a broken harness, not a finding.
 */
final class Nemesis {
    private final Store store;
    private final Clients clients;
    private final Net net;
    private final History history;
    private final Random random;
    private final long lease;
    private final List<Fault> enabled;
    private final int maxConcurrent;
    private final List<Fault> bag = new ArrayList<>();
    private final Set<Integer> busyClients = ConcurrentHashMap.newKeySet();
    private final AtomicInteger active = new AtomicInteger();
    private final AtomicReference<RuntimeException> failure = new AtomicReference<>();
    private volatile boolean storeBusy;

    Nemesis(
            Store store,
            Clients clients,
            Net net,
            History history,
            Random random,
            long lease,
            Set<Fault> enabled,
            int maxConcurrent) {
        this.store = store;
        this.clients = clients;
        this.net = net;
        this.history = history;
        this.random = random;
        this.lease = lease;
        this.enabled = new ArrayList<>(enabled);
        this.maxConcurrent = maxConcurrent;
    }

    /** Injects {@code target} faults (or fewer if the deadline comes first), then waits for every heal. */
    int run(int target, long deadlineNanos) {
        ScheduledExecutorService healer = Executors.newSingleThreadScheduledExecutor(r -> {
            Thread t = new Thread(r, "chaos-heal");
            t.setDaemon(true);
            return t;
        });
        int injected = 0;
        try {
            while (injected < target && System.nanoTime() < deadlineNanos && !enabled.isEmpty()) {
                Proc.sleep(300 + random.nextInt(1200));
                checkFailure();
                history.requireReaders();
                if (active.get() >= maxConcurrent) {
                    continue;
                }
                if (bag.isEmpty()) {
                    bag.addAll(enabled);
                    java.util.Collections.shuffle(bag, random);
                }
                if (inject(bag.get(0), healer)) {
                    bag.remove(0);
                    injected++;
                    if (injected % 50 == 0) {
                        System.err.println("[chaos] " + injected + " of " + target + " faults injected");
                    }
                }
            }
            healer.shutdown();
            if (!healer.awaitTermination(120, TimeUnit.SECONDS)) {
                throw new IllegalStateException("faults did not heal within 120 s");
            }
            checkFailure();
            return injected;
        } catch (InterruptedException e) {
            Thread.currentThread().interrupt();
            throw new IllegalStateException(e);
        } finally {
            healer.shutdownNow();
        }
    }

    private void checkFailure() {
        RuntimeException e = failure.get();
        if (e != null) {
            throw new IllegalStateException("the nemesis failed: " + e.getMessage(), e);
        }
    }

    private long between(long min, long max) {
        return min + (long) (random.nextDouble() * (max - min));
    }

    private boolean inject(Fault fault, ScheduledExecutorService healer) {
        if (fault.onClient()) {
            List<Integer> free = new ArrayList<>();
            for (int id = 1; id <= clients.count(); id++) {
                if (!busyClients.contains(id) && clients.alive(id)) {
                    free.add(id);
                }
            }
            if (free.isEmpty()) {
                return false;
            }
            int id = free.get(random.nextInt(free.size()));
            busyClients.add(id);
            active.incrementAndGet();
            Runnable heal;
            long duration;
            String target = "client " + id;
            switch (fault) {
                case PAUSE_CLIENT -> {
                    clients.pause(id);
                    heal = () -> clients.resume(id);
                    duration = between(lease * 3 / 2, lease * 3);
                }
                case KILL_CLIENT -> {
                    clients.kill(id);
                    heal = () -> clients.start(id);
                    duration = between(300, 1500);
                }
                case PARTITION -> {
                    net.partition(id, true);
                    heal = () -> net.partition(id, false);
                    duration = between(lease * 3 / 2, lease * 3);
                }
                case CLOCK_CLIENT -> {
                    long step = (random.nextBoolean() ? 1 : -1) * between(2 * lease, 4 * lease) / 1000;
                    clients.clock(id).set(step);
                    target += " clock " + (step > 0 ? "+" : "") + step + "s";
                    heal = () -> clients.clock(id).set(0);
                    duration = between(lease * 3 / 2, lease * 3);
                }
                default -> throw new IllegalArgumentException(fault.id());
            }
            int record = history.started(fault, target, id);
            schedule(healer, duration, record, () -> {
                heal.run();
                busyClients.remove(id);
            });
            return true;
        }
        if (storeBusy) {
            return false;
        }
        storeBusy = true;
        active.incrementAndGet();
        long duration = fault == Fault.FAILOVER ? 5000 : between(1000, 4000);
        int record = history.started(fault, "store", -1);
        Store.Injection injection;
        try {
            injection = store.inject(fault, random, duration);
        } catch (RuntimeException e) {
            history.healed(record);
            active.decrementAndGet();
            storeBusy = false;
            System.err.println("[chaos] could not inject " + fault.id() + ": " + e.getMessage());
            return false;
        }
        history.retarget(record, injection.target());
        schedule(healer, duration, record, () -> {
            injection.heal().run();
            storeBusy = false;
        });
        return true;
    }

    private void schedule(ScheduledExecutorService healer, long delay, int record, Runnable heal) {
        healer.schedule(
                () -> {
                    try {
                        heal.run();
                    } catch (RuntimeException e) {
                        failure.compareAndSet(null, e);
                    } finally {
                        history.healed(record);
                        active.decrementAndGet();
                    }
                },
                delay,
                TimeUnit.MILLISECONDS);
    }
}
