package dev.dlock.jdbc;

import static org.assertj.core.api.Assertions.assertThat;

import com.zaxxer.hikari.HikariDataSource;
import dev.dlock.Lease;
import dev.dlock.LeaseLostException;
import dev.dlock.LockClient;
import dev.dlock.spi.AcquireRequest;
import dev.dlock.spi.LockKey;
import dev.dlock.spi.Mode;
import java.sql.Connection;
import java.sql.SQLException;
import java.time.Duration;
import java.util.ArrayList;
import java.util.List;
import java.util.Optional;
import java.util.concurrent.TimeUnit;
import org.junit.jupiter.api.AfterEach;
import org.junit.jupiter.api.BeforeEach;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.Timeout;

/**
 * The advisory flavour's session is the lock: a renewal must prove that the very session that took it
 * is alive, a lost lease must not keep its database lock, and closing must never give the application's
 * pool a session that still holds advisory locks.
 */
@Timeout(value = 90, unit = TimeUnit.SECONDS)
abstract class AdvisorySafetyTest {
    private static final Duration LEASE = Duration.ofMillis(1500);
    private final List<LockClient> clients = new ArrayList<>();
    String prefix;

    abstract String url();

    /** The database of {@link #url()}. */
    final Dialect dialect() {
        return Dialect.ofUrl(url());
    }

    /** How many advisory locks the session of this pooled connection holds (at least of {@code key}'s). */
    abstract int advisoryLocksHeld(Connection pooled, LockKey key) throws SQLException;

    @BeforeEach
    void setUp() throws SQLException {
        prefix = TestDatabases.prefix("advsafe");
        TestDatabases.createTables(url(), dialect(), prefix);
    }

    @AfterEach
    void tearDown() throws SQLException {
        clients.forEach(LockClient::close);
        TestDatabases.dropTables(url(), prefix);
    }

    private LockClient byUri(Duration lease, boolean renewal) {
        LockClient c = LockClient.builder(url() + "&dlock.advisory=true&dlock.tablePrefix=" + prefix)
                .leaseTime(lease)
                .renewal(renewal)
                .operationTimeout(Duration.ofSeconds(2))
                .build();
        clients.add(c);
        return c;
    }

    /** Polls tryAcquire until it succeeds or the time is up. */
    private static Optional<Lease> tryUntil(LockClient c, String name, Duration within) throws InterruptedException {
        long deadline = System.nanoTime() + within.toNanos();
        while (System.nanoTime() - deadline < 0) {
            Optional<Lease> lease = c.lock(name).tryAcquire();
            if (lease.isPresent()) {
                return lease;
            }
            Thread.sleep(100);
        }
        return Optional.empty();
    }

    @Test
    void aRenewalNoticesThatTheDriverReconnectedToAnotherSession() throws Exception {
        Duration lease = Duration.ofSeconds(3); // first renewal tick about 1 s after the grant
        FaultyDataSource faulty = new FaultyDataSource(url());
        LockClient holder = LockClient.builder(JdbcBackends.builder(faulty.dataSource())
                        .tablePrefix(prefix)
                        .advisory(true)
                        .build())
                .leaseTime(lease)
                .operationTimeout(Duration.ofSeconds(2))
                .build();
        clients.add(holder);
        Lease first = holder.lock("reconnected").acquire(Duration.ofSeconds(5));
        assertThat(faulty.reconnectAll()).as("connections replaced").isGreaterThanOrEqualTo(1);
        // Before the next renewal tick: this grant must notice the new session, and be taken on a session
        // the backend knows, so that it survives while the first lease is reported lost.
        Lease second = holder.lock("reconnected-2").acquire(Duration.ofSeconds(5));
        // The old session ended: its advisory lock is gone, and the lease must say so at the next renewal.
        LeaseLostException lost = first.whenLost().get(lease.toMillis() * 2, TimeUnit.MILLISECONDS);
        assertThat(lost).hasMessageContaining("reconnected");
        LockClient otherClient = byUri(LEASE, true);
        Lease other = otherClient.lock("reconnected").acquire(Duration.ofSeconds(5));
        assertThat(first.isValid()).isFalse();
        assertThat(other.fencingToken()).isGreaterThan(first.fencingToken());
        Thread.sleep(lease.toMillis());
        assertThat(second.isValid())
                .as("the lock taken after the reconnect, renewed")
                .isTrue();
        assertThat(otherClient.lock("reconnected-2").tryAcquire()).isEmpty();
        // And the holder works again.
        other.close();
        second.close();
        holder.lock("reconnected").acquire(Duration.ofSeconds(5)).close();
    }

    @Test
    void aLostLeaseReleasesItsDatabaseLock() throws Exception {
        LockClient holder = byUri(Duration.ofMillis(1000), false);
        Lease lease = holder.lock("expired").acquire(Duration.ofSeconds(5));
        lease.whenLost().get(10, TimeUnit.SECONDS);
        LockClient other = byUri(LEASE, true);
        Optional<Lease> next = tryUntil(other, "expired", Duration.ofSeconds(5));
        assertThat(next)
                .as("the lock of the lost lease, while its client stays open")
                .isPresent();
        assertThat(next.get().fencingToken()).isGreaterThan(lease.fencingToken());
        next.get().close();
    }

    @Test
    void closeNeverGivesThePoolASessionHoldingLocks() throws Exception {
        try (HikariDataSource pool = AutoCommitOffTest.autoCommitOffPool(url(), 2)) {
            LeaseTable table = new LeaseTable(dialect(), prefix, 2_000);
            AdvisoryLocks advisory =
                    new AdvisoryLocks(table, pool::getConnection, "advisory-close-test", new Backoff());
            LockKey key = new LockKey("ns", "left-held", Mode.EXCLUSIVE);
            assertThat(advisory.acquire(new AcquireRequest(key, "owner-1", 60_000, 1, 0, null))
                            .get(10, TimeUnit.SECONDS)
                            .isGranted())
                    .isTrue();
            // Closed with the hold still in place (as after a lost lease, or a release that failed).
            advisory.close(5_000);
            try (Connection first = pool.getConnection();
                    Connection second = pool.getConnection()) {
                assertThat(advisoryLocksHeld(first, key) + advisoryLocksHeld(second, key))
                        .as("advisory locks held by the pool's sessions")
                        .isZero();
                assertThat(first.getAutoCommit())
                        .as("the pool's auto-commit setting")
                        .isFalse();
            }
        }
    }
}
