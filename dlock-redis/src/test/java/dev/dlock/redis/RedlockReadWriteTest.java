package dev.dlock.redis;

import static org.assertj.core.api.Assertions.assertThat;

import dev.dlock.Lease;
import dev.dlock.LockClient;
import java.time.Duration;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.TimeUnit;
import org.junit.jupiter.api.Test;

/** Read-write locks over 3 masters where the masters disagree. */
class RedlockReadWriteTest {
    /**
     * A waiting writer is queued on every master; granted by two of them while the third stays busy, it
     * must leave the third's queue, or new readers are held back there for a whole lease time.
     */
    @Test
    void aGrantedWriterLeavesTheQueueOfAMasterThatWasBusy() throws Exception {
        try (RedlockServers servers = new RedlockServers(3);
                LockClient redlock =
                        LockClient.builder(servers.uri()).namespace("rw").build();
                LockClient writer =
                        LockClient.builder(servers.uri()).namespace("rw").build();
                LockClient onlyMaster2 =
                        LockClient.builder(servers.get(2).uri()).namespace("rw").build()) {
            // A reader on master 2 alone (same keys: the single-server client runs the same script).
            Lease partial = onlyMaster2.readWriteLock("doc").readLock().acquire(Duration.ofSeconds(5));
            Lease reader = redlock.readWriteLock("doc").readLock().acquire(Duration.ofSeconds(5));
            CompletableFuture<Lease> waiting =
                    writer.readWriteLock("doc").writeLock().acquireAsync(Duration.ofSeconds(30));
            Thread.sleep(300); // the writer is queued on all three masters
            reader.close();
            Lease written = waiting.get(10, TimeUnit.SECONDS); // granted by masters 0 and 1
            written.close();
            // The writer leaves master 2's queue on that master's connection right after the grant; the
            // grant does not wait for it, so give it a moment (far less than the entry's own lifetime).
            long until = System.nanoTime() + TimeUnit.SECONDS.toNanos(3);
            while (onlyMaster2.describe("doc").stream().anyMatch(info -> info.waiters() > 0)) {
                assertThat(System.nanoTime() - until)
                        .as("the granted writer is still queued on master 2")
                        .isNegative();
                Thread.sleep(10);
            }
            servers.get(0).kill();
            // Masters 1 and 2 must now grant a reader: the writer is gone from master 2's queue.
            assertThat(redlock.readWriteLock("doc").readLock().tryAcquire())
                    .as("a reader right after the writer")
                    .isPresent()
                    .hasValueSatisfying(Lease::close);
            partial.close();
        }
    }
}
