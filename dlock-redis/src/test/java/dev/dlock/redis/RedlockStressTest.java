package dev.dlock.redis;

import static org.assertj.core.api.Assertions.assertThat;

import dev.dlock.DistributedReadWriteLock;
import dev.dlock.Lease;
import dev.dlock.LockClient;
import java.time.Duration;
import java.util.ArrayList;
import java.util.List;
import java.util.concurrent.CopyOnWriteArrayList;
import java.util.concurrent.atomic.AtomicInteger;
import org.junit.jupiter.api.Test;

/** Readers and writers of 3 clients contending over 3 masters; every overlap is recorded. */
class RedlockStressTest {
    private static final int ROUNDS = Integer.getInteger("dlock.redlock.stressRounds", 20);

    @Test
    void readersAndWritersNeverOverlap() throws Exception {
        try (RedlockServers servers = new RedlockServers(3)) {
            List<LockClient> clients = new ArrayList<>();
            for (int i = 0; i < 3; i++) {
                clients.add(
                        LockClient.builder(servers.uri()).namespace("stress").build());
            }
            AtomicInteger readers = new AtomicInteger();
            AtomicInteger writers = new AtomicInteger();
            List<String> violations = new CopyOnWriteArrayList<>();
            List<Throwable> errors = new CopyOnWriteArrayList<>();
            List<Thread> threads = new ArrayList<>();
            for (int t = 0; t < 6; t++) {
                int me = t;
                Thread thread = new Thread(() -> {
                    DistributedReadWriteLock rw = clients.get(me % 3).readWriteLock("rw");
                    for (int i = 0; i < ROUNDS; i++) {
                        boolean write = (i + me) % 3 == 0;
                        try (Lease lease = (write ? rw.writeLock() : rw.readLock()).acquire(Duration.ofSeconds(60))) {
                            if (write) {
                                int w = writers.incrementAndGet();
                                int r = readers.get();
                                if (w != 1 || r != 0) {
                                    violations.add("writer " + me + " token " + lease.fencingToken() + " saw writers="
                                            + w + " readers=" + r);
                                }
                                Thread.sleep(2);
                                writers.decrementAndGet();
                            } else {
                                readers.incrementAndGet();
                                int w = writers.get();
                                if (w != 0) {
                                    violations.add(
                                            "reader " + me + " token " + lease.fencingToken() + " saw writers=" + w);
                                }
                                Thread.sleep(2);
                                readers.decrementAndGet();
                            }
                        } catch (Throwable e) {
                            errors.add(e);
                        }
                    }
                });
                thread.start();
                threads.add(thread);
            }
            for (Thread thread : threads) {
                thread.join();
            }
            clients.forEach(LockClient::close);
            assertThat(errors).isEmpty();
            assertThat(violations).isEmpty();
        }
    }
}
