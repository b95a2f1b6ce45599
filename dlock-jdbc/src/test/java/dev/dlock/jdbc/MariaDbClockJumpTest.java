package dev.dlock.jdbc;

import static org.assertj.core.api.Assertions.assertThat;

import com.zaxxer.hikari.HikariConfig;
import com.zaxxer.hikari.HikariDataSource;
import dev.dlock.Lease;
import dev.dlock.LeaseLostException;
import dev.dlock.LockClient;
import dev.dlock.LockListener;
import java.lang.reflect.InvocationTargetException;
import java.lang.reflect.Proxy;
import java.sql.Connection;
import java.sql.SQLException;
import java.sql.Statement;
import java.time.Duration;
import java.util.List;
import java.util.concurrent.CopyOnWriteArrayList;
import java.util.concurrent.CountDownLatch;
import java.util.concurrent.TimeUnit;
import javax.sql.DataSource;
import org.junit.jupiter.api.AfterEach;
import org.junit.jupiter.api.BeforeEach;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.Timeout;

/**
 * The database's clock stepped forward, as the lease table sees it: rows expire early, and the holder's
 * client sees the step in the clock reading that follows each renewal.
 *
 * <p>How the clock is stepped: the machine's MariaDB cannot be given another clock, but a session can
 * ({@code SET timestamp}, which {@code NOW()} and {@code UTC_TIMESTAMP()} follow and {@code SYSDATE()} does
 * not). Every connection the clients borrow starts at the real time plus the test's offset; since every
 * operation borrows a connection, both clients see one server clock that the test steps.
 */
@Timeout(value = 120, unit = TimeUnit.SECONDS)
class MariaDbClockJumpTest {
    private static final String URL = TestDatabases.mariadb(TestDatabases.MARIADB_PORT);
    private static final Duration LEASE = Duration.ofSeconds(6);

    private final List<LockClient> clients = new CopyOnWriteArrayList<>();
    private HikariDataSource pool;
    private DataSource stepped;
    private String prefix;
    private volatile long offsetMillis;

    @BeforeEach
    void open() throws SQLException {
        prefix = TestDatabases.prefix("jump");
        TestDatabases.createTables(URL, Dialect.MYSQL, prefix);
        HikariConfig config = new HikariConfig();
        config.setJdbcUrl(URL);
        config.setMaximumPoolSize(16);
        config.setConnectionTimeout(5_000);
        pool = new HikariDataSource(config);
        stepped = (DataSource)
                Proxy.newProxyInstance(getClass().getClassLoader(), new Class<?>[] {DataSource.class}, (p, m, args) -> {
                    Object result;
                    try {
                        result = m.invoke(pool, args);
                    } catch (InvocationTargetException e) {
                        throw e.getCause();
                    }
                    if (m.getName().equals("getConnection")) {
                        setClock((Connection) result);
                    }
                    return result;
                });
    }

    @AfterEach
    void close() throws SQLException {
        clients.forEach(LockClient::close);
        pool.close();
        TestDatabases.dropTables(URL, prefix);
    }

    private void setClock(Connection c) throws SQLException {
        long offset = offsetMillis;
        try (Statement st = c.createStatement()) {
            st.execute(
                    offset == 0
                            ? "SET timestamp = DEFAULT"
                            : "SET timestamp = UNIX_TIMESTAMP(SYSDATE(6)) + " + offset / 1000 + "."
                                    + String.format("%03d", offset % 1000));
        }
    }

    private LockClient client(CountDownLatch renewals) {
        LockClient c = LockClient.builder(
                        JdbcBackends.builder(stepped).tablePrefix(prefix).build())
                .leaseTime(LEASE)
                .listener(new LockListener() {
                    @Override
                    public void renewed(int leases, int lost) {
                        renewals.countDown();
                    }
                })
                .build();
        clients.add(c);
        return c;
    }

    /** A step larger than the lease: the holder's next renewal tells it, naming the step. */
    @Test
    void aHolderLearnsOfTheStepAtItsNextRenewal() throws Exception {
        CountDownLatch renewed = new CountDownLatch(1);
        LockClient holder = client(renewed);
        LockClient other = client(new CountDownLatch(1));
        Lease held = holder.lock("step").acquire(Duration.ofSeconds(10));
        assertThat(renewed.await(30, TimeUnit.SECONDS))
                .as("a first renewal, the baseline")
                .isTrue();
        offsetMillis = 7_000;
        Lease successor = other.lock("step").acquire(Duration.ofSeconds(30));
        LeaseLostException lost = held.whenLost().get(30, TimeUnit.SECONDS);
        assertThat(lost.getMessage())
                .contains("the store's clock (jdbc:mariadb://127.0.0.1")
                .contains("jumped forward by");
        successor.close();
    }

    /**
     * A 20 s lease that is not renewed, on a client renewing another lease, the clock stepped 10 s: it is
     * no longer valid when another client takes it (without the reading it would be, 10 s longer).
     */
    @Test
    void aLeaseNotRenewedEndsBeforeAnotherClientIsGranted() throws Exception {
        CountDownLatch renewed = new CountDownLatch(1);
        LockClient holder = client(renewed);
        LockClient other = client(new CountDownLatch(1));
        Lease quiet = holder.lock("quiet")
                .withLeaseTime(Duration.ofSeconds(20))
                .withRenewal(false)
                .acquire(Duration.ofSeconds(10));
        holder.lock("busy").acquire(Duration.ofSeconds(10));
        assertThat(renewed.await(30, TimeUnit.SECONDS))
                .as("a first renewal, the baseline")
                .isTrue();
        Duration before = quiet.remaining();
        offsetMillis = 10_000;
        Lease successor = other.lock("quiet").acquire(Duration.ofSeconds(60));
        assertThat(quiet.isValid())
                .as("the quiet lease (%s left before the step) when another client was granted", before)
                .isFalse();
        successor.close();
    }
}
