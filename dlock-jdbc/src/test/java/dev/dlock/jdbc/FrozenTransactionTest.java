package dev.dlock.jdbc;

import static org.assertj.core.api.Assertions.assertThat;

import dev.dlock.Lease;
import dev.dlock.LockClient;
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
 * A client that stops between its {@code SELECT ... FOR UPDATE} and its commit (a long pause, a
 * partition that leaves the socket open) must not block the other clients of that resource for longer
 * than about its operation timeout: the database ends its idle transaction and frees the row locks.
 * Without server-side limits the rows stay locked until TCP keepalive notices, hours by default.
 */
@Timeout(value = 90, unit = TimeUnit.SECONDS)
abstract class FrozenTransactionTest {
    private static final Duration FROZEN_CLIENT_TIMEOUT = Duration.ofSeconds(1);
    private static final Duration LEASE = Duration.ofSeconds(4);
    private final List<LockClient> clients = new ArrayList<>();
    private FaultyDataSource faulty;
    private String prefix;

    abstract String url();

    /** The database of {@link #url()}. */
    final Dialect dialect() {
        return Dialect.ofUrl(url());
    }

    @BeforeEach
    void setUp() throws SQLException {
        prefix = TestDatabases.prefix("frozen");
        TestDatabases.createTables(url(), dialect(), prefix);
        faulty = new FaultyDataSource(url());
    }

    @AfterEach
    void tearDown() throws SQLException {
        faulty.thaw();
        clients.forEach(LockClient::close);
        TestDatabases.dropTables(url(), prefix);
    }

    private LockClient healthyClient() {
        LockClient c = LockClient.builder(url() + "&dlock.tablePrefix=" + prefix)
                .leaseTime(LEASE)
                .operationTimeout(Duration.ofSeconds(2))
                .build();
        clients.add(c);
        return c;
    }

    @Test
    void aClientFrozenMidTransactionDoesNotBlockOthers() throws Exception {
        LockClient holder = healthyClient();
        Lease held = holder.semaphore("frozen", 3).acquire(Duration.ofSeconds(5));

        LockClient frozen = LockClient.builder(JdbcBackends.builder(faulty.dataSource())
                        .tablePrefix(prefix)
                        .build())
                .leaseTime(LEASE)
                .operationTimeout(FROZEN_CLIENT_TIMEOUT)
                .build();
        clients.add(frozen);
        faulty.freezeCommits();
        // Its grant locks the resource row and every entry row (the holder's too), then stops before COMMIT.
        CompletableFuture.runAsync(() -> frozen.semaphore("frozen", 3).tryAcquire());
        long deadline = System.nanoTime() + TimeUnit.SECONDS.toNanos(10);
        while (faulty.frozenCommits() == 0 && System.nanoTime() - deadline < 0) {
            Thread.sleep(10);
        }
        assertThat(faulty.frozenCommits())
                .as("the grant is frozen before its commit")
                .isEqualTo(1);

        long start = System.nanoTime();
        LockClient other = healthyClient();
        Lease second = other.semaphore("frozen", 3).acquire(Duration.ofSeconds(30));
        long waitedMillis = TimeUnit.NANOSECONDS.toMillis(System.nanoTime() - start);
        System.out.println(getClass().getSimpleName() + ": a grant waited " + waitedMillis
                + " ms for a transaction frozen before its commit");
        assertThat(waitedMillis)
                .as("another client's grant waited for the frozen transaction (ms)")
                .isLessThan(FROZEN_CLIENT_TIMEOUT.toMillis() + 5_000);

        // The holder's renewals were blocked by the same row locks; over several lease times it stays held.
        Thread.sleep(LEASE.toMillis() * 2);
        assertThat(held.isValid())
                .as("the holder's lease, renewed past the frozen transaction")
                .isTrue();
        assertThat(held.whenLost()).isNotDone();
        assertThat(second.isValid()).isTrue();
        // Still frozen in its commit: only the server's limits freed the rows.
        assertThat(faulty.frozenCommits()).isEqualTo(1);
        second.close();
        held.close();
    }
}
