package dev.dlock.jdbc;

import static org.assertj.core.api.Assertions.assertThat;

import com.zaxxer.hikari.HikariConfig;
import com.zaxxer.hikari.HikariDataSource;
import dev.dlock.Lease;
import dev.dlock.LockClient;
import java.sql.Connection;
import java.sql.ResultSet;
import java.sql.SQLException;
import java.time.Duration;
import java.util.ArrayList;
import java.util.List;
import java.util.Optional;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.CopyOnWriteArrayList;
import java.util.concurrent.ExecutorService;
import java.util.concurrent.Executors;
import java.util.concurrent.Future;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.atomic.AtomicInteger;
import java.util.function.Function;
import org.junit.jupiter.api.AfterEach;
import org.junit.jupiter.api.BeforeEach;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.Timeout;

/**
 * A {@code DataSource} whose connections come with auto-commit off (HikariCP {@code autoCommit=false},
 * Spring's {@code spring.datasource.hikari.auto-commit=false}): every guarantee must hold as with the
 * default pool. Each case would fail if any path relied on the pool's auto-commit (the pool rolls back
 * what was not committed when a connection returns).
 */
@Timeout(value = 120, unit = TimeUnit.SECONDS)
abstract class AutoCommitOffTest {
    private final List<LockClient> clients = new CopyOnWriteArrayList<>();
    private final List<String> prefixes = new ArrayList<>();
    private HikariDataSource pool;
    private String prefix;

    abstract String url();

    /** The database of {@link #url()}. */
    final Dialect dialect() {
        return Dialect.ofUrl(url());
    }

    @BeforeEach
    void openPool() throws SQLException {
        prefix = newPrefix();
        TestDatabases.createTables(url(), dialect(), prefix);
        pool = autoCommitOffPool(url(), 24);
    }

    @AfterEach
    void closeAll() throws SQLException {
        clients.forEach(LockClient::close);
        pool.close();
        for (String p : prefixes) {
            TestDatabases.dropTables(url(), p);
        }
    }

    static HikariDataSource autoCommitOffPool(String url, int size) {
        HikariConfig config = new HikariConfig();
        config.setJdbcUrl(url);
        config.setAutoCommit(false);
        config.setMaximumPoolSize(size);
        config.setConnectionTimeout(5_000);
        return new HikariDataSource(config);
    }

    private String newPrefix() {
        String p = TestDatabases.prefix("acoff");
        prefixes.add(p);
        return p;
    }

    private LockClient client(Duration lease) {
        LockClient c = LockClient.builder(
                        JdbcBackends.builder(pool).tablePrefix(prefix).build())
                .leaseTime(lease)
                .operationTimeout(Duration.ofSeconds(3))
                .build();
        clients.add(c);
        return c;
    }

    @Test
    void createTablesReallyCreatesThem() throws Exception {
        String fresh = newPrefix();
        LockClient c = LockClient.builder(JdbcBackends.builder(pool)
                        .tablePrefix(fresh)
                        .createTables(true)
                        .build())
                .build();
        clients.add(c);
        long token;
        try (Lease lease = c.lock("created").acquire(Duration.ofSeconds(5))) {
            token = lease.fencingToken();
            assertThat(token).isPositive();
        }
        try (Connection direct = TestDatabases.connect(url());
                ResultSet rs = direct.createStatement().executeQuery("SELECT token FROM " + fresh + "locks")) {
            assertThat(rs.next())
                    .as("tables and row seen by another connection")
                    .isTrue();
            assertThat(rs.getLong(1)).as("the grant's token, committed").isEqualTo(token);
        }
    }

    @Test
    void tryAcquireExcludesAndTokensAreDistinct() {
        LockClient a = client(Duration.ofSeconds(30));
        LockClient b = client(Duration.ofSeconds(30));
        for (Function<LockClient, Optional<Lease>> kind : List.<Function<LockClient, Optional<Lease>>>of(
                c -> c.lock("x").tryAcquire(),
                c -> c.fairLock("x").tryAcquire(),
                c -> c.readWriteLock("x").writeLock().tryAcquire(),
                c -> c.semaphore("x", 1).tryAcquire())) {
            Lease first = kind.apply(a).orElseThrow();
            assertThat(kind.apply(b)).as("the second client is excluded").isEmpty();
            first.close();
            Lease second = kind.apply(b).orElseThrow();
            assertThat(second.fencingToken()).isGreaterThan(first.fencingToken());
            second.close();
        }
    }

    @Test
    void mutualExclusionUnderContention() throws Exception {
        List<LockClient> three =
                List.of(client(Duration.ofSeconds(30)), client(Duration.ofSeconds(30)), client(Duration.ofSeconds(30)));
        AtomicInteger inside = new AtomicInteger();
        AtomicInteger maxInside = new AtomicInteger();
        List<Long> tokens = new CopyOnWriteArrayList<>();
        ExecutorService threads = Executors.newFixedThreadPool(6);
        try {
            List<Future<?>> done = new ArrayList<>();
            for (int t = 0; t < 6; t++) {
                LockClient c = three.get(t % 3);
                done.add(threads.submit(() -> {
                    for (int i = 0; i < 15; i++) {
                        try (Lease lease = c.lock("contended").acquire(Duration.ofSeconds(30))) {
                            maxInside.accumulateAndGet(inside.incrementAndGet(), Math::max);
                            tokens.add(lease.fencingToken());
                            Thread.sleep(2);
                            inside.decrementAndGet();
                        }
                    }
                    return null;
                }));
            }
            for (Future<?> f : done) {
                f.get(90, TimeUnit.SECONDS);
            }
        } finally {
            threads.shutdownNow();
        }
        assertThat(maxInside.get()).as("holders at once").isEqualTo(1);
        assertThat(tokens).hasSize(90).doesNotHaveDuplicates().isSorted();
    }

    @Test
    void renewalsReallyExtendTheLease() throws Exception {
        Duration lease = Duration.ofMillis(1500);
        LockClient holder = client(lease);
        LockClient other = client(lease);
        Lease exclusive = holder.lock("renewed").acquire(Duration.ofSeconds(5));
        Lease fair = holder.fairLock("renewed").acquire(Duration.ofSeconds(5));
        Thread.sleep(lease.toMillis() * 3);
        assertThat(exclusive.isValid()).isTrue();
        assertThat(fair.isValid()).isTrue();
        assertThat(other.lock("renewed").tryAcquire())
                .as("held in the store after 3 lease times")
                .isEmpty();
        assertThat(other.fairLock("renewed").tryAcquire()).isEmpty();
        exclusive.close();
        fair.close();
        assertThat(other.lock("renewed").tryAcquire())
                .as("released in the store")
                .isPresent();
    }

    @Test
    void waitersAreWokenWhenTheHolderReleases() throws Exception {
        LockClient holder = client(Duration.ofSeconds(60));
        LockClient waiter = client(Duration.ofSeconds(60));
        Lease held = holder.lock("wake").acquire(Duration.ofSeconds(5));
        CompletableFuture<Lease> waiting = waiter.lock("wake").acquireAsync(Duration.ofSeconds(30));
        Thread.sleep(1_000);
        assertThat(waiting).isNotDone();
        long released = System.nanoTime();
        held.close();
        Lease next = waiting.get(20, TimeUnit.SECONDS);
        long after = TimeUnit.NANOSECONDS.toMillis(System.nanoTime() - released);
        assertThat(next.fencingToken()).isGreaterThan(held.fencingToken());
        // The holder's lease had 59 s left: only a wake-up (NOTIFY, or the backoff of the other databases)
        // gets the waiter in this soon.
        assertThat(after).as("woken after the release (ms)").isLessThan(5_000);
        next.close();
    }
}
