package dev.dlock.jdbc;

import static org.assertj.core.api.Assertions.assertThat;

import dev.dlock.Lease;
import dev.dlock.LockClient;
import java.sql.Connection;
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

/** The advisory flavour: exclusion by the database's advisory locks, tokens from the table. */
@Timeout(value = 60, unit = TimeUnit.SECONDS)
abstract class AdvisoryTest {
    private final List<LockClient> clients = new ArrayList<>();
    private String prefix;

    abstract String url();

    @BeforeEach
    void setUp() {
        prefix = TestDatabases.prefix("adv");
    }

    @AfterEach
    void tearDown() throws SQLException {
        clients.forEach(LockClient::close);
        TestDatabases.dropTables(url(), prefix);
    }

    private LockClient client() {
        LockClient c =
                LockClient.connect(url() + "&dlock.advisory=true&dlock.createTables=true&dlock.tablePrefix=" + prefix);
        clients.add(c);
        return c;
    }

    @Test
    void excludesOtherClientsAndOtherAcquisitionsOfTheSameClient() throws Exception {
        LockClient a = client();
        LockClient b = client();
        Lease first = a.lock("adv").tryAcquire().orElseThrow();
        assertThat(b.lock("adv").tryAcquire()).isEmpty();
        assertThat(a.lock("adv").tryAcquire())
                .as("advisory locks are re-entrant per session; the backend still excludes")
                .isEmpty();
        CompletableFuture<Lease> waiting = b.lock("adv").acquireAsync(Duration.ofSeconds(20));
        Thread.sleep(200);
        first.close();
        Lease second = waiting.get(10, TimeUnit.SECONDS);
        assertThat(second.fencingToken()).isGreaterThan(first.fencingToken());
        try (Connection c = TestDatabases.connect(url());
                PreparedStatement ps =
                        c.prepareStatement("SELECT token, owner FROM " + prefix + "locks WHERE name = ?")) {
            ps.setString(1, "adv");
            try (ResultSet rs = ps.executeQuery()) {
                assertThat(rs.next()).isTrue();
                assertThat(rs.getLong(1)).as("token kept in the table").isEqualTo(second.fencingToken());
                assertThat(rs.getString(2))
                        .as("no lease row: the session holds the lock")
                        .isNull();
            }
        }
        second.close();
        // Other kinds still use the lease table.
        try (Lease read = a.readWriteLock("adv").readLock().acquire(Duration.ofSeconds(5))) {
            assertThat(b.readWriteLock("adv").writeLock().tryAcquire()).isEmpty();
            assertThat(read.isValid()).isTrue();
        }
    }

    /**
     * Advisory grants take their tokens from the table like lease-table grants: a block per grant (room
     * for passes within a client), increasing also after the row keeping the last token was deleted.
     */
    @Test
    void advisoryGrantsReserveATokenBlockAndSurviveADeletedRow() throws Exception {
        LockClient a = client();
        LockClient b = client();
        try (Connection c = TestDatabases.connect(url())) { // opened first: the deletion follows the grant
            long first;
            try (Lease lease = a.lock("room").acquire(Duration.ofSeconds(5))) {
                first = lease.fencingToken();
            }
            long second;
            try (Lease lease = b.lock("room").acquire(Duration.ofSeconds(5))) {
                second = lease.fencingToken();
            }
            assertThat(second - first).as("room for passes").isGreaterThanOrEqualTo(Tables.TOKEN_BLOCK);
            assertThat(TestDatabases.deleteLockRows(c, prefix, "room")).isEqualTo(1);
            try (Lease lease = a.lock("room").acquire(Duration.ofSeconds(5))) {
                assertThat(lease.fencingToken())
                        .as("a re-created row starts above every earlier token")
                        .isGreaterThan(second);
            }
        }
    }

    /**
     * Renewals keep an advisory hold past its lease time. The lease leaves a renewal a second between its
     * tick and the deadline: with 600 ms (400 ms of room) a loaded 4-lane CI run once found the lease not
     * valid, its report lost. {@code checkValid} names the reason should it fail again.
     */
    @Test
    void leaseOutlivesItsLeaseTimeWhileTheSessionLives() throws Exception {
        LockClient c = LockClient.builder(
                        url() + "&dlock.advisory=true&dlock.createTables=true&dlock.tablePrefix=" + prefix)
                .leaseTime(Duration.ofMillis(1_500))
                .build();
        clients.add(c);
        Lease lease = c.lock("session").acquire(Duration.ofSeconds(5));
        Thread.sleep(3_500);
        lease.checkValid();
        assertThat(client().lock("session").tryAcquire()).isEmpty();
        lease.close();
    }

    /**
     * A hold cut short ({@code extend} to less than is left) lets a waiter that asked before in soon after
     * the new end: the lapsed hold's advisory lock is released by its client, with the waiters' wake-up
     * where the database sends one. The contract suite has the same case for the lease table.
     */
    @Test
    void aWaiterWhoAskedBeforeAHoldWasCutShortIsGrantedSoonAfterTheNewEnd() throws Exception {
        Lease held = client().lock("cut").withRenewal(false).acquire(Duration.ofSeconds(5));
        CompletableFuture<Lease> waiter = client().lock("cut").acquireAsync(Duration.ofSeconds(20));
        Thread.sleep(500);
        assertThat(waiter).as("the waiter waits while the 30 s hold is held").isNotDone();
        held.extend(Duration.ofSeconds(1));
        long cut = System.nanoTime();
        Lease next = waiter.get(20, TimeUnit.SECONDS);
        long waited = TimeUnit.NANOSECONDS.toMillis(System.nanoTime() - cut);
        assertThat(waited)
                .as("granted %d ms after the hold was cut to 1 s", waited)
                .isLessThan(6_000);
        assertThat(held.isValid()).as("the first holder's lease ran out first").isFalse();
        next.close();
    }
}
