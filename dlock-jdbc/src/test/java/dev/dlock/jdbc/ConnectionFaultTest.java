package dev.dlock.jdbc;

import static org.assertj.core.api.Assertions.assertThat;

import dev.dlock.Lease;
import dev.dlock.LeaseLostException;
import dev.dlock.LockClient;
import java.sql.PreparedStatement;
import java.sql.ResultSet;
import java.sql.SQLException;
import java.time.Duration;
import java.util.ArrayList;
import java.util.List;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.TimeUnit;
import org.junit.jupiter.api.AfterEach;
import org.junit.jupiter.api.BeforeEach;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.Timeout;

/**
 * The server kills the client's connections ({@code pg_terminate_backend}, {@code KILL}).
 *
 * <p>Lease-table flavour: nothing is lost. Leases are rows, not sessions; the pool drops the dead
 * connections, the call in flight is retried on a fresh one, renewals go on, and the PostgreSQL listener
 * reconnects and wakes its waiters. Advisory flavour: the session was the lock, so every advisory lease of
 * the client is lost and its lost signal fires; the next acquire opens a new session.
 *
 * <p>Each database identifies only this test's connections: PostgreSQL by application name, MariaDB by a
 * database of the test's own.
 */
@Timeout(value = 90, unit = TimeUnit.SECONDS)
abstract class ConnectionFaultTest {
    private static final Duration LEASE = Duration.ofMillis(1500);
    final List<LockClient> clients = new ArrayList<>();
    String prefix;

    abstract String clientUrl();

    abstract void prepare() throws SQLException;

    abstract void cleanUp() throws SQLException;

    /** Kills every connection this test's clients hold; returns how many. */
    abstract int killConnections() throws SQLException;

    @BeforeEach
    void setUp() throws SQLException {
        prefix = TestDatabases.prefix("kill");
        prepare();
    }

    @AfterEach
    void tearDown() throws SQLException {
        clients.forEach(LockClient::close);
        cleanUp();
    }

    LockClient client(boolean advisory) {
        LockClient c = LockClient.builder(clientUrl() + "&dlock.tablePrefix=" + prefix + "&dlock.createTables=true"
                        + (advisory ? "&dlock.advisory=true" : ""))
                .leaseTime(LEASE)
                .operationTimeout(Duration.ofSeconds(2))
                .build();
        clients.add(c);
        return c;
    }

    @Test
    void leaseTableSurvivesKilledConnections() throws Exception {
        LockClient holder = client(false);
        LockClient waiter = client(false);
        Lease lease = holder.lock("killed").acquire(Duration.ofSeconds(5));
        Lease fair = holder.fairLock("killed").acquire(Duration.ofSeconds(5));
        CompletableFuture<Lease> waiting = waiter.lock("killed").acquireAsync(Duration.ofSeconds(30));
        Thread.sleep(300);
        assertThat(killConnections()).isGreaterThanOrEqualTo(2);
        Thread.sleep(LEASE.toMillis() * 2);
        assertThat(lease.isValid()).as("renewed on fresh connections").isTrue();
        assertThat(fair.isValid()).isTrue();
        assertThat(waiting).isNotDone();
        assertThat(killConnections()).isGreaterThanOrEqualTo(1);
        lease.close();
        fair.close();
        Lease next = waiting.get(10, TimeUnit.SECONDS);
        assertThat(next.fencingToken()).isGreaterThan(lease.fencingToken());
        next.close();
    }

    @Test
    void advisoryLeasesAreLostWithTheirSession() throws Exception {
        LockClient holder = client(true);
        LockClient other = client(true);
        Lease lease = holder.lock("advisory-killed").acquire(Duration.ofSeconds(5));
        assertThat(other.lock("advisory-killed").tryAcquire()).isEmpty();
        assertThat(killConnections()).isGreaterThanOrEqualTo(1);
        LeaseLostException lost = lease.whenLost().get(LEASE.toMillis() + 5_000, TimeUnit.MILLISECONDS);
        assertThat(lost).hasMessageContaining("advisory-killed");
        assertThat(lease.isValid()).isFalse();
        // The database dropped the lock with the session: another client takes it, with a newer token.
        Lease next = other.lock("advisory-killed").acquire(Duration.ofSeconds(10));
        assertThat(next.fencingToken()).isGreaterThan(lease.fencingToken());
        next.close();
        // And the holder's client works again on a new session.
        holder.lock("advisory-again").acquire(Duration.ofSeconds(5)).close();
    }

    static int count(PreparedStatement ps) throws SQLException {
        int n = 0;
        try (ResultSet rs = ps.executeQuery()) {
            while (rs.next()) {
                n++;
            }
        }
        return n;
    }
}
