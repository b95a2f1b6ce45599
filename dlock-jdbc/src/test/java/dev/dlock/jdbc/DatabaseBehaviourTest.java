package dev.dlock.jdbc;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;

import com.zaxxer.hikari.HikariConfig;
import com.zaxxer.hikari.HikariDataSource;
import dev.dlock.DistributedLock;
import dev.dlock.Lease;
import dev.dlock.LockBackendException;
import dev.dlock.LockClient;
import dev.dlock.LockInfo;
import dev.dlock.LockKind;
import dev.dlock.spi.AcquireRequest;
import dev.dlock.spi.AcquireResult;
import dev.dlock.spi.LockBackend;
import dev.dlock.spi.LockKey;
import dev.dlock.spi.Mode;
import dev.dlock.testsupport.FreePorts;
import java.lang.reflect.Proxy;
import java.sql.Connection;
import java.sql.PreparedStatement;
import java.sql.ResultSet;
import java.sql.SQLException;
import java.sql.Statement;
import java.time.Duration;
import java.util.ArrayList;
import java.util.List;
import java.util.Map;
import java.util.Optional;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.CopyOnWriteArrayList;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.atomic.AtomicInteger;
import java.util.function.Consumer;
import org.junit.jupiter.api.AfterEach;
import org.junit.jupiter.api.BeforeEach;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.Timeout;

/**
 * What the contract suite cannot see from outside: database time, durable tokens in the table, stored
 * names, statements per renewal tick and per acquire+release, the guard helpers. One subclass per
 * database; each test works in tables of its own prefix.
 */
@Timeout(value = 60, unit = TimeUnit.SECONDS)
abstract class DatabaseBehaviourTest {
    private final List<LockClient> clients = new CopyOnWriteArrayList<>();
    private HikariDataSource pool;
    private CountingDataSource counting;
    String prefix;

    /** The URL of the database under test. */
    abstract String url();

    /** The database of {@link #url()}. */
    final Dialect dialect() {
        return Dialect.ofUrl(url());
    }

    /** A URL where nothing answers, for the unreachable-database test. */
    abstract String unreachableUrl(int port);

    @BeforeEach
    void openPool() throws SQLException {
        prefix = TestDatabases.prefix("beh");
        TestDatabases.createTables(url(), dialect(), prefix);
        HikariConfig config = new HikariConfig();
        config.setJdbcUrl(url());
        config.setMaximumPoolSize(6);
        config.setPoolName("test-pool");
        pool = new HikariDataSource(config);
        counting = new CountingDataSource(pool);
    }

    @AfterEach
    void closeAll() throws SQLException {
        clients.forEach(LockClient::close);
        pool.close();
        TestDatabases.dropTables(url(), prefix);
    }

    LockClient client(Consumer<LockClient.Builder> options) {
        LockClient.Builder b = LockClient.builder(JdbcBackends.builder(counting.dataSource())
                        .tablePrefix(prefix)
                        .build())
                .namespace("beh")
                .operationTimeout(Duration.ofSeconds(3));
        options.accept(b);
        LockClient c = b.build();
        clients.add(c);
        return c;
    }

    private long databaseNow(Connection c) throws SQLException {
        try (Statement st = c.createStatement();
                ResultSet rs = st.executeQuery("SELECT " + dialect().nowMillis())) {
            rs.next();
            return rs.getLong(1);
        }
    }

    private long expiresAt(Connection c, String name) throws SQLException {
        try (PreparedStatement ps = c.prepareStatement("SELECT expires_at FROM " + prefix + "locks WHERE name = ?")) {
            ps.setString(1, name);
            try (ResultSet rs = ps.executeQuery()) {
                assertThat(rs.next()).as("lock row of '%s'", name).isTrue();
                return rs.getLong(1);
            }
        }
    }

    private void setExpiresAt(Connection c, String name, long value) throws SQLException {
        try (PreparedStatement ps =
                c.prepareStatement("UPDATE " + prefix + "locks SET expires_at = ? WHERE name = ?")) {
            ps.setLong(1, value);
            ps.setString(2, name);
            assertThat(ps.executeUpdate()).isEqualTo(1);
        }
    }

    @Test
    void expiryIsDecidedByTheDatabaseClockAlone() throws Exception {
        LockClient a = client(b -> b.leaseTime(Duration.ofSeconds(60)).renewal(false));
        LockClient b = client(x -> {});
        Lease held = a.lock("db-time").acquire(Duration.ofSeconds(5));
        try (Connection c = pool.getConnection()) {
            long now = databaseNow(c);
            long expires = expiresAt(c, "db-time");
            // The expiry was computed by the database: its now + the lease time.
            assertThat(expires - now).isBetween(50_000L, 60_000L);
            // The database's clock says the lease ran out (nothing in the JVM changed): b may take it.
            setExpiresAt(c, "db-time", now - 1);
            assertThat(held.isValid())
                    .as("the JVM still thinks the lease is valid")
                    .isTrue();
            Optional<Lease> taken = b.lock("db-time").tryAcquire();
            assertThat(taken)
                    .as("granted because the database's clock passed the expiry")
                    .isPresent();
            taken.get().close();
        }
        LockClient shortLived = client(x -> x.leaseTime(Duration.ofMillis(300)).renewal(false));
        Lease brief = shortLived.lock("db-time-2").acquire(Duration.ofSeconds(5));
        try (Connection c = pool.getConnection()) {
            // And the other way round: the database says an hour more, so a JVM-expired lease still blocks.
            setExpiresAt(c, "db-time-2", databaseNow(c) + 3_600_000);
        }
        Thread.sleep(600);
        assertThat(brief.isValid()).as("the JVM deadline passed").isFalse();
        assertThat(b.lock("db-time-2").tryAcquire())
                .as("the database still holds it")
                .isEmpty();
    }

    @Test
    void fencingTokensAreDurableAndTheTokenRowIsNeverDeleted() throws Exception {
        long last = 0;
        for (int round = 0; round < 3; round++) {
            // A new client each round: the token comes from the table, not from any client's memory.
            LockClient c = client(b -> {});
            try (Lease lease = c.lock("durable").acquire(Duration.ofSeconds(5))) {
                assertThat(lease.fencingToken()).isGreaterThan(last);
                last = lease.fencingToken();
            }
            c.close();
        }
        LockClient c = client(b -> {});
        Lease lease = c.semaphore("durable", 2).acquire(Duration.ofSeconds(5));
        assertThat(c.forceRelease("durable")).isTrue();
        lease.close();
        long semaphoreToken =
                c.semaphore("durable", 2).acquire(Duration.ofSeconds(5)).fencingToken();
        assertThat(semaphoreToken).isGreaterThan(lease.fencingToken());
        try (Connection conn = pool.getConnection();
                PreparedStatement ps = conn.prepareStatement(
                        "SELECT kind, token FROM " + prefix + "locks WHERE name = ? ORDER BY kind")) {
            ps.setString(1, "durable");
            try (ResultSet rs = ps.executeQuery()) {
                assertThat(rs.next()).isTrue();
                assertThat(rs.getString(1)).isEqualTo("lock");
                assertThat(rs.getLong(2)).isEqualTo(last);
                assertThat(rs.next()).isTrue();
                assertThat(rs.getString(1)).isEqualTo("sem");
                assertThat(rs.getLong(2)).isEqualTo(semaphoreToken);
            }
        }
    }

    /**
     * Every grant (inline exclusive and entry kinds) steps the token by a block, the room the engine uses
     * to pass holds within a client, and tokens keep increasing when the row keeping the last token is
     * deleted (the time floor of {@link Tables#nextToken}).
     */
    @Test
    void grantsReserveATokenBlockAndTokensSurviveADeletedRow() throws Exception {
        LockClient a = client(b -> {});
        LockClient b = client(x -> {});
        for (java.util.function.Function<LockClient, Lease> grant :
                List.<java.util.function.Function<LockClient, Lease>>of(
                        c -> c.lock("room").acquire(Duration.ofSeconds(5)),
                        c -> c.semaphore("room", 1).acquire(Duration.ofSeconds(5)))) {
            long first;
            try (Lease lease = grant.apply(a)) {
                first = lease.fencingToken();
            }
            long second;
            try (Lease lease = grant.apply(b)) {
                second = lease.fencingToken();
            }
            assertThat(second - first).as("room for passes").isGreaterThanOrEqualTo(Tables.TOKEN_BLOCK);
            try (Connection c = pool.getConnection()) {
                TestDatabases.deleteLockRows(c, prefix, "room");
            }
            try (Lease lease = grant.apply(a)) {
                assertThat(lease.fencingToken())
                        .as("a re-created row starts above every earlier token")
                        .isGreaterThan(second);
            }
        }
    }

    /**
     * The lock row deleted right after each grant and the name granted again at once, 200 times per path:
     * the exclusive acquire (one statement on PostgreSQL and MySQL, a grant transaction on H2), a semaphore
     * permit (a grant transaction everywhere) and the advisory flavour's token (one statement on
     * PostgreSQL and MySQL, a transaction on H2). On one connection, below the client and with nothing
     * released, so a round often takes less than a millisecond: with the floor in whole milliseconds a
     * re-grant within the millisecond of the lost row's last grant repeated its token.
     */
    @Test
    void tokensIncreaseWhenTheRowIsDeletedRightAfterEachGrant() throws Exception {
        LeaseTable table = new LeaseTable(dialect(), prefix, 5_000);
        List<String> notAbove = new ArrayList<>();
        try (Connection c = pool.getConnection()) {
            for (Mode mode : List.of(Mode.EXCLUSIVE, Mode.PERMIT)) {
                LockKey key = new LockKey("beh", "gone", mode);
                regrantAfterDeletions(c, mode.name(), notAbove, owner -> {
                    // Nothing released: the deletion ends the exclusive hold; the permits outnumber the rounds.
                    AcquireResult result = table.acquire(c, new AcquireRequest(key, owner, 60_000, 1_000, 0, null));
                    assertThat(result.isGranted())
                            .as("%s granted to %s", mode, owner)
                            .isTrue();
                    return result.token();
                });
            }
            LockKey key = new LockKey("beh", "gone", Mode.EXCLUSIVE);
            regrantAfterDeletions(c, "advisory token", notAbove, owner -> table.nextToken(c, key));
        }
        assertThat(notAbove)
                .as("grants right after a deletion whose token was not above the lost row's")
                .isEmpty();
    }

    private interface Grant {
        long token(String owner) throws SQLException;
    }

    /** 200 rounds of delete and grant; adds each round whose token was not above the one before. */
    private void regrantAfterDeletions(Connection c, String path, List<String> notAbove, Grant grant)
            throws SQLException {
        long last = grant.token("owner-0");
        for (int round = 1; round <= 200; round++) {
            assertThat(TestDatabases.deleteLockRows(c, prefix, "gone")).isPositive();
            long token = grant.token("owner-" + round);
            if (token <= last) {
                notAbove.add(path + " round " + round + ": " + token + " after " + last);
            }
            last = token;
        }
    }

    @Test
    void namesWithQuotesSemicolonsNonAsciiAndMaximumLengthWork() throws Exception {
        String longName = "L".repeat(1000) + "ü".repeat(12); // 1,024 UTF-8 bytes
        List<String> names = List.of(
                "it's", "it\"s", "a;b", "x'); DROP TABLE " + prefix + "locks; --", "ключ-锁-🔒", "%_\\", longName);
        LockClient c = client(b -> {});
        List<Lease> leases = new ArrayList<>();
        for (String name : names) {
            leases.add(c.lock(name).tryAcquire().orElseThrow());
            leases.add(c.readWriteLock(name).readLock().tryAcquire().orElseThrow());
        }
        LockClient other = client(b -> {});
        for (String name : names) {
            assertThat(other.lock(name).tryAcquire()).as("'%s' is held", name).isEmpty();
            List<LockInfo> described = other.describe(name);
            assertThat(described).extracting(LockInfo::name).containsOnly(name);
            assertThat(described)
                    .extracting(LockInfo::kind)
                    .containsExactlyInAnyOrder(LockKind.LOCK, LockKind.READ_WRITE);
        }
        assertThat(other.list("")).extracting(LockInfo::name).containsAll(names);
        try (Connection conn = pool.getConnection();
                PreparedStatement ps = conn.prepareStatement(
                        "SELECT name, name_key FROM " + prefix + "locks WHERE kind = 'lock' AND name = ?")) {
            ps.setString(1, longName);
            try (ResultSet rs = ps.executeQuery()) {
                assertThat(rs.next()).isTrue();
                assertThat(rs.getString(1)).isEqualTo(longName);
                assertThat(rs.getString(2)).hasSize(64).isEqualTo(Tables.nameKey(longName));
            }
        }
        leases.forEach(Lease::close);
        for (String name : names) {
            other.lock(name).tryAcquire().orElseThrow().close();
        }
    }

    @Test
    void renewalSendsOneStatementPerTick() throws Exception {
        AtomicInteger ticks = new AtomicInteger();
        AtomicInteger renewed = new AtomicInteger();
        LockClient c = client(b -> b.leaseTime(Duration.ofMillis(1500))
                .backend(b.backend().andThen(backend -> (LockBackend) Proxy.newProxyInstance(
                        getClass().getClassLoader(), new Class<?>[] {LockBackend.class}, (p, m, args) -> {
                            if (m.getName().equals("renew")) {
                                ticks.incrementAndGet(); // one renew call per watchdog tick
                                renewed.addAndGet(((List<?>) args[0]).size());
                            }
                            try {
                                return m.invoke(backend, args);
                            } catch (java.lang.reflect.InvocationTargetException e) {
                                throw e.getCause();
                            }
                        }))));
        List<Lease> leases = new ArrayList<>();
        for (int i = 0; i < 60; i++) {
            leases.add(c.lock("renew-" + i).acquire(Duration.ofSeconds(5)));
        }
        leases.add(c.fairLock("renew-fair").acquire(Duration.ofSeconds(5)));
        leases.add(c.semaphore("renew-sem", 3).acquire(Duration.ofSeconds(5)));
        Thread.sleep(300);
        counting.clear();
        ticks.set(0);
        renewed.set(0);
        Thread.sleep(3_000);
        int tickCount = ticks.get();
        List<String> renewals = counting.sent().stream()
                .filter(sql -> sql.contains("SET expires_at =") && sql.contains("owner IN"))
                .toList();
        assertThat(leases).allMatch(Lease::isValid);
        assertThat(tickCount).isGreaterThanOrEqualTo(3);
        assertThat(renewed.get()).as("every lease renewed in the window").isGreaterThanOrEqualTo(leases.size());
        // PostgreSQL renews both tables in one statement; MySQL and H2 send one statement per table.
        int perTick = dialect() == Dialect.POSTGRESQL ? 1 : 2;
        assertThat(renewals.size())
                .as("renewal statements in %d ticks: %s", tickCount, counting.sent())
                .isLessThanOrEqualTo((tickCount + 1) * perTick); // + 1: a tick may straddle the window
        leases.forEach(Lease::close);
    }

    @Test
    void aHandOffConfirmationIsOneReadThatChangesNothing() throws Exception {
        LockClient c = client(b -> b.localHandoff(32, Duration.ofSeconds(10)));
        DistributedLock lock = c.lock("confirm");
        Lease first = lock.acquire(Duration.ofSeconds(5));
        CompletableFuture<Lease> waiter = CompletableFuture.supplyAsync(() -> lock.acquire(Duration.ofSeconds(10)));
        Thread.sleep(300); // it asked after the grant: its pass needs the store's word first
        long expires;
        try (Connection conn = pool.getConnection()) {
            expires = expiresAt(conn, "confirm");
        }
        counting.clear();
        first.close();
        Lease passed = waiter.get(5, TimeUnit.SECONDS);
        List<String> sent = counting.sent();
        assertThat(passed.fencingToken()).as("passed, not granted again").isEqualTo(first.fencingToken() + 1);
        assertThat(sent)
                .as("statements of the release that passed the hold")
                .anyMatch(sql -> sql.startsWith("SELECT owner FROM") && sql.contains("owner IN"))
                .noneMatch(sql -> sql.contains("SET expires_at =") && sql.contains("owner IN"));
        try (Connection conn = pool.getConnection()) {
            assertThat(expiresAt(conn, "confirm")).as("the row's expiry").isEqualTo(expires);
        }
        passed.close();
    }

    @Test
    void onPostgresqlAReleaseCommitsWithoutWaitingForTheLogAndLeavesEverySessionAsItWas() throws Exception {
        LockClient c = client(b -> {});
        Lease lease = c.lock("async-release").acquire(Duration.ofSeconds(5));
        counting.clear();
        lease.close();
        List<String> release = counting.sent();
        String async = "set_config('synchronous_commit', 'off', true)";
        if (dialect() == Dialect.POSTGRESQL) {
            assertThat(release)
                    .as("the release statement")
                    .singleElement()
                    .asString()
                    .contains(async);
        } else {
            assertThat(release).as("no such setting here").noneMatch(sql -> sql.contains("synchronous_commit"));
        }
        if (dialect() == Dialect.POSTGRESQL) {
            // Local to the release's own transaction: every pooled session, the release's among them, still
            // waits for the log at commit (a grant must survive a crash).
            int idle = pool.getHikariPoolMXBean().getIdleConnections();
            List<Connection> borrowed = new ArrayList<>();
            try {
                for (int i = 0; i < idle; i++) {
                    borrowed.add(pool.getConnection());
                }
                for (Connection conn : borrowed) {
                    try (Statement st = conn.createStatement();
                            ResultSet rs = st.executeQuery("SHOW synchronous_commit")) {
                        rs.next();
                        assertThat(rs.getString(1))
                                .as("a pooled session's synchronous_commit")
                                .isEqualTo("on");
                    }
                }
            } finally {
                for (Connection conn : borrowed) {
                    conn.close();
                }
            }
            assertThat(borrowed).as("pooled sessions looked at").isNotEmpty();
        }
    }

    @Test
    void exclusiveAcquireAndReleaseAreOneStatementEach() {
        LockClient c = client(b -> {});
        c.lock("rt").acquire(Duration.ofSeconds(5)).close(); // warm up
        counting.clear();
        c.lock("rt").acquire(Duration.ofSeconds(5)).close();
        List<String> sent = counting.sent();
        if (dialect() == Dialect.H2) {
            // H2: one short transaction (lock the row, update it, commit) and one release statement.
            assertThat(sent).hasSize(4).contains("COMMIT");
        } else {
            assertThat(sent).hasSize(2);
        }
    }

    @Test
    void waitersAreWokenByNotificationOrBoundedBackoffNotByPolling() throws Exception {
        LockClient holder = client(b -> b.leaseTime(Duration.ofSeconds(30)));
        LockClient waiter = client(b -> {});
        Lease held = holder.lock("wake").acquire(Duration.ofSeconds(5));
        counting.clear();
        var waiting = waiter.lock("wake").acquireAsync(Duration.ofSeconds(20));
        Thread.sleep(2_000);
        // Attempts are the statements on the lock table. Not counted: the set-up of the clients' dedicated
        // sessions, which their threads open at their own pace, sometimes after the clear above (that is
        // what once made this count 4 on PostgreSQL), LISTEN, and MySQL's wake-lock statements. On MySQL
        // the holder took a free lock, so it raised no wake lock: the waiter backs off (MariaDbWakeUpTest
        // shows the wake-up between contending clients).
        List<String> whileWaiting = counting.sent().stream()
                .filter(sql -> sql.contains(prefix + "locks"))
                .toList(); // the holder sends nothing in this window
        int attempts = whileWaiting.size();
        long released = System.nanoTime();
        held.close();
        Lease next = waiting.get(10, TimeUnit.SECONDS);
        long wokenAfterMillis = TimeUnit.NANOSECONDS.toMillis(System.nanoTime() - released);
        next.close();
        if (dialect() == Dialect.POSTGRESQL) {
            // The first attempt and the one right after LISTEN is live; then silence until NOTIFY.
            assertThat(attempts)
                    .as("attempts while waiting 2 s: %s", whileWaiting)
                    .isLessThanOrEqualTo(3);
        } else {
            // Backoff 10 ms doubling to 200 ms with jitter: about 15 attempts in 2 s, never a busy loop.
            assertThat(attempts)
                    .as("attempts while waiting 2 s: %s", whileWaiting)
                    .isBetween(5, 40);
        }
        assertThat(wokenAfterMillis).as("woken after the release").isLessThan(5_000);
    }

    @Test
    void fencedUpdateRejectsAStaleToken() throws Exception {
        String table = prefix + "account";
        try (Connection conn = pool.getConnection();
                Statement st = conn.createStatement()) {
            st.execute("CREATE TABLE " + table + " (id INT PRIMARY KEY, note VARCHAR(100), fence_token BIGINT)");
            st.execute("INSERT INTO " + table + " (id, note, fence_token) VALUES (1, 'new', NULL)");
        }
        LockClient c = client(b -> {});
        FencedUpdate guard = FencedUpdate.of(table, "id", "fence_token");
        try (Connection conn = pool.getConnection()) {
            long first = c.lock("account").acquire(Duration.ofSeconds(5)).fencingToken();
            c.forceRelease("account"); // first holder "loses" the lock without noticing
            Lease second = c.lock("account").acquire(Duration.ofSeconds(5));
            assertThat(guard.update(conn, 1, second.fencingToken(), Map.of("note", "second's; 'quoted'")))
                    .isTrue();
            assertThat(guard.update(conn, 1, second.fencingToken(), Map.of("note", "second again")))
                    .as("same token may write again")
                    .isTrue();
            assertThat(guard.update(conn, 1, first, Map.of("note", "stale")))
                    .as("stale token refused")
                    .isFalse();
            assertThat(guard.update(conn, 2, second.fencingToken(), Map.of("note", "x")))
                    .as("missing row")
                    .isFalse();
            try (Statement st = conn.createStatement();
                    ResultSet rs = st.executeQuery("SELECT note, fence_token FROM " + table + " WHERE id = 1")) {
                rs.next();
                assertThat(rs.getString(1)).isEqualTo("second again");
                assertThat(rs.getLong(2)).isEqualTo(second.fencingToken());
            }
            second.close();
        } finally {
            try (Connection conn = pool.getConnection();
                    Statement st = conn.createStatement()) {
                st.execute("DROP TABLE " + table);
            }
        }
        assertThatThrownBy(() -> FencedUpdate.of("t; DROP TABLE x", "id", "tok"))
                .isInstanceOf(IllegalArgumentException.class)
                .hasMessageContaining("plain SQL identifier");
        assertThatThrownBy(() -> guard.update(pool.getConnection(), 1, 1, Map.of("a=1, b", 2)))
                .isInstanceOf(IllegalArgumentException.class);
    }

    @Test
    void stockDeductionNeverOversellsOptimisticallyOrPessimistically() throws Exception {
        String table = prefix + "product_stock";
        try (Connection conn = pool.getConnection();
                Statement st = conn.createStatement()) {
            st.execute("CREATE TABLE " + table + " (product_id INT PRIMARY KEY, number INT NOT NULL)");
            st.execute("INSERT INTO " + table + " VALUES (1, 60), (2, 60)");
        }
        StockDeduction stock = StockDeduction.of(table, "product_id", "number");
        try {
            for (int product : new int[] {1, 2}) {
                AtomicInteger sold = new AtomicInteger();
                List<Thread> threads = new ArrayList<>();
                List<Throwable> errors = new CopyOnWriteArrayList<>();
                for (int t = 0; t < 5; t++) {
                    Thread thread = new Thread(() -> {
                        try (Connection conn = pool.getConnection()) {
                            for (int i = 0; i < 20; i++) {
                                boolean ok = product == 1
                                        ? stock.deductOptimistic(conn, product, 1)
                                        : stock.deductPessimistic(conn, product, 1);
                                if (ok) {
                                    sold.incrementAndGet();
                                }
                            }
                        } catch (Throwable e) {
                            errors.add(e);
                        }
                    });
                    thread.start();
                    threads.add(thread);
                }
                for (Thread thread : threads) {
                    thread.join();
                }
                assertThat(errors).isEmpty();
                assertThat(sold.get())
                        .as("product %d sold exactly its stock", product)
                        .isEqualTo(60);
                try (Connection conn = pool.getConnection();
                        Statement st = conn.createStatement();
                        ResultSet rs =
                                st.executeQuery("SELECT number FROM " + table + " WHERE product_id = " + product)) {
                    rs.next();
                    assertThat(rs.getInt(1)).isZero();
                }
            }
            try (Connection conn = pool.getConnection()) {
                assertThat(stock.deductOptimistic(conn, 1, 1)).isFalse();
                assertThat(stock.deductPessimistic(conn, 2, 1)).isFalse();
                assertThat(stock.deductPessimistic(conn, 99, 1))
                        .as("missing item")
                        .isFalse();
                assertThat(conn.getAutoCommit()).as("auto-commit restored").isTrue();
            }
        } finally {
            try (Connection conn = pool.getConnection();
                    Statement st = conn.createStatement()) {
                st.execute("DROP TABLE " + table);
            }
        }
        assertThatThrownBy(() -> StockDeduction.of("stock", "id", "n-1"))
                .isInstanceOf(IllegalArgumentException.class)
                .hasMessageContaining("quantity column");
    }

    @Test
    void unreachableDatabaseFailsWithLockBackendExceptionWithinTheTimeout() throws Exception {
        int port = FreePorts.next(); // nothing listens there
        long start = System.nanoTime();
        assertThatThrownBy(() -> LockClient.builder(unreachableUrl(port))
                        .operationTimeout(Duration.ofSeconds(1))
                        .build())
                .isInstanceOf(LockBackendException.class);
        assertThat(TimeUnit.NANOSECONDS.toMillis(System.nanoTime() - start)).isLessThan(4_000);
    }
}
