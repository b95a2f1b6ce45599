package dev.dlock.jdbc;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;

import com.zaxxer.hikari.HikariConfig;
import com.zaxxer.hikari.HikariDataSource;
import dev.dlock.spi.LockBackend.Subscription;
import java.sql.Connection;
import java.sql.DriverManager;
import java.sql.PreparedStatement;
import java.sql.ResultSet;
import java.sql.SQLException;
import java.sql.Statement;
import java.util.List;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.CopyOnWriteArrayList;
import java.util.concurrent.CountDownLatch;
import java.util.concurrent.ExecutionException;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.atomic.AtomicInteger;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.Timeout;
import org.junit.jupiter.params.ParameterizedTest;
import org.junit.jupiter.params.provider.ValueSource;

/**
 * The PostgreSQL LISTEN connection: live whatever the pool's auto-commit, given back to the pool not
 * listening, and no subscription left behind by a call that timed out.
 */
@Timeout(value = 60, unit = TimeUnit.SECONDS)
class PgNotifierTest {
    private static final String URL = TestDatabases.postgres(TestDatabases.PG_PORT);
    private static final long TIMEOUT_MILLIS = 2_000;

    private static String channel() {
        return "dlock_test_" + Long.toHexString(System.nanoTime());
    }

    private static void notify(String channel) throws SQLException {
        try (Connection c = TestDatabases.connect(URL);
                PreparedStatement ps = c.prepareStatement("SELECT pg_notify(?, 'next')")) {
            ps.setString(1, channel);
            ps.executeQuery().close();
        }
    }

    @ParameterizedTest(name = "pool auto-commit {0}")
    @ValueSource(booleans = {true, false})
    void listensWhateverThePoolsAutoCommitAndGivesTheConnectionBackClean(boolean autoCommit) throws Exception {
        HikariConfig config = new HikariConfig();
        config.setJdbcUrl(URL);
        config.setAutoCommit(autoCommit);
        config.setMaximumPoolSize(1);
        try (HikariDataSource pool = new HikariDataSource(config)) {
            PgNotifier notifier = new PgNotifier(pool::getConnection, "pg-listen-test", TIMEOUT_MILLIS);
            String channel = channel();
            // A reconnect wakes every listener without a payload; only NOTIFY brings "next".
            List<String> payloads = new CopyOnWriteArrayList<>();
            notifier.subscribe(channel, next -> payloads.add(String.valueOf(next)))
                    .get(10, TimeUnit.SECONDS);
            notify(channel);
            long deadline = System.nanoTime() + TimeUnit.SECONDS.toNanos(5);
            while (!payloads.contains("next") && System.nanoTime() - deadline < 0) {
                Thread.sleep(20);
            }
            assertThat(payloads).as("wake-ups received").contains("next");
            notifier.close(5_000);
            try (Connection c = pool.getConnection();
                    Statement st = c.createStatement();
                    ResultSet rs = st.executeQuery("SELECT count(*) FROM pg_listening_channels()")) {
                rs.next();
                assertThat(rs.getInt(1))
                        .as("channels the pool's session still listens to")
                        .isZero();
                assertThat(c.getAutoCommit()).as("the pool's setting, restored").isEqualTo(autoCommit);
            }
        }
    }

    @Test
    void aSubscriptionThatIsNotLiveInTimeFailsAndLeavesNothingBehind() throws Exception {
        CountDownLatch databaseBack = new CountDownLatch(1);
        CountDownLatch connected = new CountDownLatch(1);
        PgNotifier notifier = new PgNotifier(
                () -> {
                    try {
                        databaseBack.await();
                    } catch (InterruptedException e) {
                        Thread.currentThread().interrupt();
                        throw new SQLException("interrupted", e);
                    }
                    Connection c = DriverManager.getConnection(URL);
                    connected.countDown();
                    return c;
                },
                "pg-listen-late-test",
                TIMEOUT_MILLIS);
        try {
            String channel = channel();
            AtomicInteger woken = new AtomicInteger();
            CompletableFuture<Subscription> subscribed = notifier.subscribe(channel, next -> woken.incrementAndGet());
            long start = System.nanoTime();
            assertThatThrownBy(() -> subscribed.get(TIMEOUT_MILLIS + 3_000, TimeUnit.MILLISECONDS))
                    .isInstanceOf(ExecutionException.class)
                    .hasMessageContaining("LISTEN was not live within the operation timeout");
            assertThat(TimeUnit.NANOSECONDS.toMillis(System.nanoTime() - start)).isLessThan(TIMEOUT_MILLIS + 1_000);
            assertThat(notifier.channels()).as("listeners kept").isEmpty();
            // The database answers again: the LISTEN the call asked for must not happen now.
            databaseBack.countDown();
            assertThat(connected.await(10, TimeUnit.SECONDS)).isTrue();
            Thread.sleep(300); // a few rounds of the listener thread
            notify(channel);
            Thread.sleep(500);
            assertThat(woken.get())
                    .as("wake-ups delivered for a subscription that failed")
                    .isZero();
            assertThat(notifier.channels()).isEmpty();
        } finally {
            databaseBack.countDown();
            notifier.close(5_000);
        }
    }
}
