package dev.dlock.jdbc;

import static org.assertj.core.api.Assertions.assertThat;

import com.zaxxer.hikari.HikariConfig;
import com.zaxxer.hikari.HikariDataSource;
import dev.dlock.Lease;
import dev.dlock.LockClient;
import dev.dlock.spi.LockKey;
import dev.dlock.spi.Mode;
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

/**
 * MariaDB wake-ups between contending clients ({@link WakeBeacons}, {@link WakeWatchers}): a holder that
 * got the lock after waiting keeps its wake lock, a waiter of another client blocks on it instead of
 * polling the table, and closing leaves no session or thread behind.
 */
@Timeout(value = 60, unit = TimeUnit.SECONDS)
class MariaDbWakeUpTest {
    private final String url = TestDatabases.mariadb(TestDatabases.MARIADB_PORT);
    private final List<LockClient> clients = new ArrayList<>();
    private HikariDataSource pool;
    private CountingDataSource counting;
    private String prefix;

    @BeforeEach
    void openPool() throws SQLException {
        prefix = TestDatabases.prefix("wake");
        TestDatabases.createTables(url, Dialect.MYSQL, prefix);
        HikariConfig config = new HikariConfig();
        config.setJdbcUrl(url);
        config.setMaximumPoolSize(10);
        pool = new HikariDataSource(config);
        counting = new CountingDataSource(pool);
    }

    @AfterEach
    void closeAll() throws SQLException {
        clients.forEach(LockClient::close);
        pool.close();
        TestDatabases.dropTables(url, prefix);
    }

    private LockClient client() {
        LockClient c = LockClient.builder(JdbcBackends.builder(counting.dataSource())
                        .tablePrefix(prefix)
                        .build())
                .namespace("wake")
                .leaseTime(Duration.ofSeconds(30))
                .operationTimeout(Duration.ofSeconds(3))
                .build();
        clients.add(c);
        return c;
    }

    private boolean wakeLockHeld(String name) throws SQLException {
        String id = WakeBeacons.wakeLockId(prefix, new LockKey("wake", name, Mode.EXCLUSIVE));
        try (Connection c = TestDatabases.connect(url);
                PreparedStatement ps = c.prepareStatement("SELECT IS_USED_LOCK(?) IS NOT NULL")) {
            ps.setString(1, id);
            try (ResultSet rs = ps.executeQuery()) {
                rs.next();
                return rs.getInt(1) == 1;
            }
        }
    }

    @Test
    void aWaiterBlocksOnTheContendedHoldersWakeLockInsteadOfPolling() throws Exception {
        LockClient first = client();
        LockClient second = client();
        LockClient third = client();
        Lease a = first.lock("w").acquire(Duration.ofSeconds(5));
        CompletableFuture<Lease> secondWaits = second.lock("w").acquireAsync(Duration.ofSeconds(20));
        Thread.sleep(300); // busy answers: the second client's grant will come after waiting
        a.close();
        Lease b = secondWaits.get(10, TimeUnit.SECONDS);
        long until = System.nanoTime() + TimeUnit.SECONDS.toNanos(5);
        while (!wakeLockHeld("w") && System.nanoTime() - until < 0) {
            Thread.sleep(10);
        }
        assertThat(wakeLockHeld("w"))
                .as("a grant after waiting raises the wake lock")
                .isTrue();

        counting.clear();
        CompletableFuture<Lease> thirdWaits = third.lock("w").acquireAsync(Duration.ofSeconds(20));
        Thread.sleep(2_000);
        List<String> attempts = counting.sent().stream()
                .filter(sql -> sql.contains(prefix + "locks"))
                .toList();
        b.close();
        thirdWaits.get(10, TimeUnit.SECONDS).close();
        // Polling with back-off (10 ms doubling to 200 ms) makes about 15 attempts in 2 s; blocked on the
        // wake lock, the waiter tries a few times until its watcher is armed, then once a second.
        assertThat(attempts).as("attempts on the lock table while waiting 2 s").hasSizeLessThanOrEqualTo(8);
        // The beacon thread drops the wake lock after the release (WakeBeacons): allow it a moment. A watcher
        // that wakes late holds it for an instant too (by design: it is a hint), so "released" is a wake lock
        // seen down in three reads in a row; one left up with its hold would never be.
        until = System.nanoTime() + TimeUnit.SECONDS.toNanos(5);
        int downInARow = 0;
        while (downInARow < 3 && System.nanoTime() - until < 0) {
            downInARow = wakeLockHeld("w") ? 0 : downInARow + 1;
            Thread.sleep(50);
        }
        assertThat(downInARow)
                .as("released with the hold (the third client did not wait after its grant)")
                .isEqualTo(3);
    }

    @Test
    void closingGivesBackEveryWakeSessionAndStopsItsThreads() throws Exception {
        LockClient holder = client();
        LockClient waiter = client();
        Lease held = holder.lock("c").acquire(Duration.ofSeconds(5));
        CompletableFuture<Lease> waiting = waiter.lock("c").acquireAsync(Duration.ofSeconds(20));
        Thread.sleep(300);
        held.close();
        waiting.get(10, TimeUnit.SECONDS); // held after waiting: a wake lock is raised, and not released
        CompletableFuture<Lease> again = holder.lock("c").acquireAsync(Duration.ofSeconds(20));
        Thread.sleep(300); // the first client now waits: its watcher holds a session
        assertThat(threads("dlock-wake-")).as("beacon and watcher threads run").isPositive();
        holder.close();
        waiter.close();
        assertThat(again).isCompletedExceptionally();
        assertThat(pool.getHikariPoolMXBean().getActiveConnections())
                .as("every connection back in the pool")
                .isZero();
        assertThat(threads("dlock-wake-")).as("wake threads left").isZero();
        assertThat(wakeLockHeld("c")).as("no wake lock left").isFalse();
    }

    private static long threads(String prefix) {
        return Thread.getAllStackTraces().keySet().stream()
                .filter(t -> t.isAlive() && t.getName().startsWith(prefix))
                .count();
    }
}
