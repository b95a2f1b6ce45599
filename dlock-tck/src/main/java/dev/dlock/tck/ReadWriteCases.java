package dev.dlock.tck;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;

import dev.dlock.DistributedReadWriteLock;
import dev.dlock.Lease;
import dev.dlock.LeaseLostException;
import dev.dlock.LockClient;
import dev.dlock.LockException;
import dev.dlock.LockInfo;
import dev.dlock.LockListener;
import java.time.Duration;
import java.util.List;
import java.util.Optional;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.ExecutorService;
import java.util.concurrent.Executors;
import java.util.concurrent.Future;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.atomic.AtomicInteger;
import org.junit.jupiter.api.Test;

/**
 * Read-write locks: readers share, a writer excludes everyone, a queued writer is not starved (nor held
 * back by a cancelled one), downgrade is allowed and upgrade fails fast.
 */
abstract class ReadWriteCases extends ContractSection {
    ReadWriteCases(LockContractTest contract) {
        super(contract);
    }

    @Test
    void readersShare() throws Exception {
        DistributedReadWriteLock a = client().readWriteLock("rw-share");
        DistributedReadWriteLock b = client().readWriteLock("rw-share");
        try (Lease r1 = a.readLock().acquire(LONG_WAIT);
                Lease r2 = b.readLock().acquire(LONG_WAIT)) {
            assertThat(r1.isValid() && r2.isValid()).isTrue();
            assertThat(r2.fencingToken()).isNotEqualTo(r1.fencingToken());
        }
    }

    @Test
    void writerExcludesReadersAndWriters() {
        DistributedReadWriteLock a = client().readWriteLock("rw-excl");
        DistributedReadWriteLock b = client().readWriteLock("rw-excl");
        try (Lease w = a.writeLock().acquire(LONG_WAIT)) {
            assertThat(b.readLock().tryAcquire()).isEmpty();
            assertThat(b.writeLock().tryAcquire()).isEmpty();
            assertThat(w.isValid()).isTrue();
        }
        try (Lease r = a.readLock().acquire(LONG_WAIT)) {
            assertThat(b.writeLock().tryAcquire())
                    .as("a reader excludes writers")
                    .isEmpty();
            assertThat(r.isValid()).isTrue();
        }
        assertThat(b.writeLock().tryAcquire()).isPresent();
    }

    @Test
    void aQueuedWriterIsNotStarvedByNewReaders() throws Exception {
        DistributedReadWriteLock a = client().readWriteLock("rw-starve");
        Lease reader = a.readLock().acquire(LONG_WAIT);
        CompletableFuture<Lease> writer =
                client().readWriteLock("rw-starve").writeLock().acquireAsync(Duration.ofSeconds(60));
        Thread.sleep(500);
        assertThat(client().readWriteLock("rw-starve").readLock().tryAcquire())
                .as("a new reader waits behind the queued writer")
                .isEmpty();
        reader.close();
        Lease w = writer.get(30, TimeUnit.SECONDS);
        assertThat(w.isValid()).isTrue();
        w.close();
        assertThat(client().readWriteLock("rw-starve").readLock().tryAcquire()).isPresent();
    }

    @Test
    void aCancelledWriterDoesNotHoldNewReadersBack() throws Exception {
        Lease read = client().readWriteLock("writer-cancel").readLock().acquire(LONG_WAIT);
        CompletableFuture<Lease> writer =
                client().readWriteLock("writer-cancel").writeLock().acquireAsync(LONG_WAIT);
        Thread.sleep(300); // queued in the store, holding new readers back
        assertThat(writer.cancel(true)).isTrue();
        LockClient reader = client();
        awaitTrue(Duration.ofSeconds(5), () -> {
            Optional<Lease> next =
                    reader.readWriteLock("writer-cancel").readLock().tryAcquire();
            next.ifPresent(Lease::close);
            return next.isPresent();
        });
        read.close();
    }

    @Test
    void writeToReadDowngradeIsAllowed() {
        DistributedReadWriteLock rw = client().readWriteLock("rw-down");
        rw.writeLock().lock();
        rw.readLock().lock();
        rw.writeLock().unlock();
        DistributedReadWriteLock other = client().readWriteLock("rw-down");
        assertThat(other.writeLock().tryAcquire())
                .as("the downgraded read hold still excludes writers")
                .isEmpty();
        Optional<Lease> sharedRead = other.readLock().tryAcquire();
        assertThat(sharedRead).as("other readers may now share").isPresent();
        sharedRead.get().close();
        rw.readLock().unlock();
        assertThat(other.writeLock().tryAcquire()).isPresent();
    }

    /**
     * A thread that holds the write lock and takes the read lock while another thread of its client already
     * waits for the read lock: that reader waits for the write hold, so the downgrade must not wait behind
     * it (it did, and both waited forever, before the engine let a downgrade go first).
     */
    @Test
    void aDowngradeDoesNotWaitBehindAReaderOfItsOwnClient() throws Exception {
        String name = "rw-down-local";
        AtomicInteger queued = new AtomicInteger();
        LockClient c = client(b -> b.listener(new LockListener() {
            @Override
            public void queued(String lock) {
                queued.incrementAndGet();
            }
        }));
        DistributedReadWriteLock rw = c.readWriteLock(name);
        rw.writeLock().lock();
        int queuedBefore = queued.get();
        ExecutorService readerThread = Executors.newSingleThreadExecutor();
        try {
            Future<Boolean> reader = readerThread.submit(() -> {
                rw.readLock().lock();
                rw.readLock().unlock();
                return true;
            });
            awaitTrue(LONG_WAIT, () -> queued.get() > queuedBefore); // the reader waits in its client's queue
            assertThat(rw.readLock().tryLock(10, TimeUnit.SECONDS))
                    .as("the downgrade is granted while a reader of the same client waits")
                    .isTrue();
            rw.writeLock().unlock();
            assertThat(reader.get(LONG_WAIT.toMillis(), TimeUnit.MILLISECONDS))
                    .as("the reader shares the read lock with the downgraded holder")
                    .isTrue();
            rw.readLock().unlock();
        } finally {
            readerThread.shutdownNow();
        }
    }

    @Test
    void aWriterQueuedBeforeADowngradeWaitsForTheDowngradedReader() throws Exception {
        DistributedReadWriteLock a = client().readWriteLock("rw-down-queue");
        a.writeLock().lock();
        LockClient b = client();
        CompletableFuture<Lease> writer =
                b.readWriteLock("rw-down-queue").writeLock().acquireAsync(LONG_WAIT);
        awaitQueued(b, "rw-down-queue");
        a.readLock().lock(); // downgrade: the read hold is taken while the write hold is still held
        a.writeLock().unlock();
        assertThatThrownBy(() -> writer.get(2, TimeUnit.SECONDS))
                .as("the queued writer is not granted beside the downgraded read hold")
                .isInstanceOf(java.util.concurrent.TimeoutException.class);
        a.readLock().unlock();
        Lease w = writer.get(30, TimeUnit.SECONDS);
        assertThat(w.isValid()).isTrue();
        w.close();
    }

    /**
     * A writer queued before a downgrade is granted after the downgraded read, so its token is above the
     * read's, even on stores whose tokens follow the order entries were made in (the read's is made after
     * the writer's).
     */
    @Test
    void tokensIncreaseAcrossADowngradeAndTheWriterQueuedBeforeIt() throws Exception {
        String name = "rw-down-token";
        DistributedReadWriteLock a = client().readWriteLock(name);
        a.writeLock().lock();
        long write = a.writeLock().currentLease().orElseThrow().fencingToken();
        LockClient b = client();
        CompletableFuture<Lease> writer = b.readWriteLock(name).writeLock().acquireAsync(LONG_WAIT);
        awaitQueued(b, name);
        a.readLock().lock(); // downgrade
        long read = a.readLock().currentLease().orElseThrow().fencingToken();
        assertThat(read).as("the downgraded read's token is above its write's").isGreaterThan(write);
        a.writeLock().unlock();
        assertThat(b.describe(name))
                .as("describe shows the token the downgraded reader got")
                .flatExtracting(LockInfo::holders)
                .extracting(LockInfo.Holder::fencingToken)
                .containsExactly(read);
        a.readLock().unlock();
        try (Lease w = writer.get(30, TimeUnit.SECONDS)) {
            assertThat(w.fencingToken())
                    .as(
                            "the writer queued before the downgrade is granted after the read: tokens %d, %d, then",
                            write, read)
                    .isGreaterThan(read);
        }
    }

    /**
     * A downgrade from a write hold the store no longer has (force-released here, as a lease that ended
     * in the store is) must not read beside the writer granted since: the read waits like any read, or the
     * downgrade fails. Taken right after the force-release, before the holder's next renewal tells it.
     */
    @Test
    void aDowngradeFromAWriteHoldTheStoreLostDoesNotReadBesideTheNextWriter() throws Exception {
        String name = "rw-down-lost";
        DistributedReadWriteLock a = client().readWriteLock(name);
        a.writeLock().lock();
        LockClient b = client();
        assertThat(b.forceRelease(name)).isTrue();
        try (Lease writer = b.readWriteLock(name).writeLock().acquire(LONG_WAIT)) {
            boolean read;
            try {
                read = a.readLock().tryLock(1, TimeUnit.SECONDS);
            } catch (LockException refused) {
                read = false; // the store refused the downgrade: its write hold is gone
            }
            if (read) {
                a.readLock().unlock();
            }
            assertThat(read)
                    .as(
                            "a read granted beside the writer %d after a downgrade from a lost write hold",
                            writer.fencingToken())
                    .isFalse();
            assertThat(writer.isValid()).isTrue();
        }
        try {
            a.writeLock().unlock();
        } catch (LeaseLostException toldAlready) {
            // the holder may have been told of the force-release by now: either way the hold is gone
        }
    }

    @Test
    void readToWriteUpgradeFailsFast() {
        DistributedReadWriteLock rw = client().readWriteLock("rw-up");
        rw.readLock().lock();
        long start = System.nanoTime();
        assertThatThrownBy(() -> rw.writeLock().lock())
                .isInstanceOf(IllegalMonitorStateException.class)
                .hasMessageContaining("upgrad");
        assertThat(millisSince(start)).isLessThan(1_000);
        rw.readLock().unlock();
        rw.writeLock().lock();
        rw.writeLock().unlock();
    }

    /** Waits until the store shows a waiter on a name (or half a second where it shows no queue). */
    private void awaitQueued(LockClient c, String name) throws InterruptedException {
        long deadline = System.nanoTime() + TimeUnit.SECONDS.toNanos(20);
        while (System.nanoTime() - deadline < 0) {
            List<LockInfo> infos = c.describe(name);
            if (infos.stream().anyMatch(i -> i.waiters() < 0)) {
                Thread.sleep(500);
                return;
            }
            if (infos.stream().anyMatch(i -> i.waiters() > 0)) {
                return;
            }
            Thread.sleep(20);
        }
        throw new AssertionError("no waiter on '" + name + "' showed up within 20 s");
    }
}
