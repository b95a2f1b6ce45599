package dev.dlock.jdbc;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;

import dev.dlock.Lease;
import dev.dlock.LockBackendException;
import dev.dlock.LockClient;
import dev.dlock.testsupport.TcpProxy;
import java.lang.reflect.InvocationTargetException;
import java.lang.reflect.Proxy;
import java.sql.SQLException;
import java.time.Duration;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.atomic.AtomicBoolean;
import java.util.concurrent.atomic.AtomicInteger;
import javax.sql.DataSource;
import org.h2.jdbcx.JdbcDataSource;
import org.h2.tools.Server;
import org.junit.jupiter.api.AfterEach;
import org.junit.jupiter.api.BeforeEach;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.function.ThrowingConsumer;

/**
 * The operation timeout is the one bound of every call: the backend keeps no deadline of its own (the
 * engine fails each store call at the operation timeout), and its retries of transient failures are
 * bounded by a count. H2 in this JVM behind a {@link TcpProxy}; a few seconds in all.
 */
class OperationTimeoutTest {
    private static final Duration TIMEOUT = Duration.ofSeconds(1);
    /** Scheduling slack on a shared 2-core machine. */
    private static final long SLACK_MILLIS = 400;

    private Server server;
    private TcpProxy proxy;
    private String database;
    private LockClient client;

    @BeforeEach
    void setUp() throws Exception {
        server = TestDatabases.startH2Server();
        database = TestDatabases.prefix("optimeout");
        proxy = TcpProxy.start("127.0.0.1", server.getPort());
    }

    @AfterEach
    void tearDown() {
        proxy.restore();
        if (client != null) {
            client.close();
        }
        proxy.close();
        server.stop();
    }

    @Test
    void aDatabaseThatStopsAnsweringFailsEveryCallWithinTheOperationTimeout() {
        client = LockClient.builder(TestDatabases.h2(proxy.port(), database) + ";dlock.createTables=true")
                .operationTimeout(TIMEOUT)
                .build();
        Lease held = acquireWhileHealthy("held");
        proxy.freeze(); // connections stay open, nothing answers: only timeouts can tell (H2 has no socket timeout)

        assertFailsWithinTimeout("acquire", c -> c.lock("other").acquire(Duration.ofSeconds(5)));
        assertFailsWithinTimeout("tryAcquire", c -> c.fairLock("other").tryAcquire());
        assertFailsWithinTimeout("describe", c -> c.describe("held"));
        assertFailsWithinTimeout("forceRelease", c -> c.forceRelease("held"));
        assertThat(held.isValid()).isTrue(); // the lease is lost by its renewals, not by these calls
    }

    @Test
    void brokenConnectionsAreRetriedABoundedNumberOfTimes() {
        JdbcDataSource h2 = new JdbcDataSource();
        h2.setURL("jdbc:h2:mem:" + database + ";DB_CLOSE_DELAY=-1");
        AtomicBoolean broken = new AtomicBoolean();
        AtomicInteger borrowed = new AtomicInteger();
        DataSource failing = (DataSource)
                Proxy.newProxyInstance(getClass().getClassLoader(), new Class<?>[] {DataSource.class}, (p, m, args) -> {
                    if (m.getName().equals("getConnection") && broken.get()) {
                        borrowed.incrementAndGet();
                        throw new SQLException("connection refused", "08001");
                    }
                    try {
                        return m.invoke(h2, args);
                    } catch (InvocationTargetException e) {
                        throw e.getCause();
                    }
                });
        client = LockClient.builder(
                        JdbcBackends.builder(failing).createTables(true).build())
                .operationTimeout(Duration.ofSeconds(5))
                .build();
        client.lock("ok").acquire(Duration.ofSeconds(1)).close();
        broken.set(true);

        long start = System.nanoTime();
        // describe: one store call, after whose failure the engine sends nothing else
        assertThatThrownBy(() -> client.describe("ok"))
                .isInstanceOf(LockBackendException.class)
                .hasMessageContaining("connection refused");
        // Given up after a bounded number of attempts, long before the operation timeout.
        assertThat(borrowed.get()).isEqualTo(JdbcBackend.ATTEMPTS);
        assertThat(TimeUnit.NANOSECONDS.toMillis(System.nanoTime() - start)).isLessThan(2_000);
    }

    /** The first calls of a fresh JVM may be slow on a loaded machine: tries until one succeeds. */
    private Lease acquireWhileHealthy(String name) {
        for (int attempt = 1; ; attempt++) {
            try {
                return client.lock(name).acquire(Duration.ofSeconds(5));
            } catch (LockBackendException e) {
                if (attempt == 5) {
                    throw e;
                }
            }
        }
    }

    private void assertFailsWithinTimeout(String what, ThrowingConsumer<LockClient> call) {
        long start = System.nanoTime();
        assertThatThrownBy(() -> call.accept(client)).as(what).isInstanceOf(LockBackendException.class);
        assertThat(TimeUnit.NANOSECONDS.toMillis(System.nanoTime() - start))
                .as(what + " failed after (ms)")
                .isLessThan(TIMEOUT.toMillis() + SLACK_MILLIS);
    }
}
