package dev.dlock.spring;

import static org.assertj.core.api.Assertions.assertThat;

import dev.dlock.LockBackendException;
import dev.dlock.LockClient;
import dev.dlock.LockInfo;
import java.sql.Connection;
import java.sql.DriverManager;
import java.sql.ResultSet;
import java.sql.Statement;
import java.util.ArrayList;
import java.util.HashMap;
import java.util.HashSet;
import java.util.List;
import java.util.Map;
import java.util.concurrent.CopyOnWriteArrayList;
import java.util.concurrent.ExecutorService;
import java.util.concurrent.Executors;
import java.util.concurrent.Future;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.atomic.AtomicInteger;
import org.junit.jupiter.api.AfterEach;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.Timeout;
import org.springframework.boot.WebApplicationType;
import org.springframework.boot.builder.SpringApplicationBuilder;
import org.springframework.boot.diagnostics.FailureAnalysis;
import org.springframework.context.ConfigurableApplicationContext;

/**
 * Spring applications whose pool hands out connections with auto-commit off ({@code
 * spring.datasource.hikari.auto-commit=false}, a common setting) on the machine's PostgreSQL: the
 * annotated method never runs twice at once for one key across two instances, {@code
 * dlock.jdbc.create-tables} really creates the tables, and a failed start does not advise settings that
 * are already made.
 */
@Timeout(value = 180, unit = TimeUnit.SECONDS)
class JdbcAutoCommitOffStarterTest {
    private static final String URL = "jdbc:postgresql://127.0.0.1:5432/test";

    private final String prefix = "starter_acoff_" + Long.toHexString(System.nanoTime()) + "_";
    private final List<ConfigurableApplicationContext> apps = new ArrayList<>();

    @AfterEach
    void stop() throws Exception {
        apps.forEach(ConfigurableApplicationContext::close);
        try (Connection c = DriverManager.getConnection(URL, "postgres", "");
                Statement st = c.createStatement()) {
            st.execute("DROP TABLE IF EXISTS " + prefix + "entries");
            st.execute("DROP TABLE IF EXISTS " + prefix + "locks");
        }
    }

    private ConfigurableApplicationContext start() {
        Map<String, Object> properties = new HashMap<>();
        properties.put("spring.main.banner-mode", "off");
        properties.put("spring.autoconfigure.exclude", StarterContractTest.REDIS_AUTO_CONFIGURATION);
        properties.put("spring.datasource.url", URL);
        properties.put("spring.datasource.username", "postgres");
        properties.put("spring.datasource.hikari.auto-commit", "false");
        properties.put("dlock.jdbc.table-prefix", prefix);
        properties.put("dlock.jdbc.create-tables", "true");
        properties.put("dlock.namespace", "acoff");
        properties.put("dlock.operation-timeout", "3s");
        ConfigurableApplicationContext app = new SpringApplicationBuilder(TestApplication.class)
                .web(WebApplicationType.NONE)
                .properties(properties)
                .run();
        apps.add(app);
        return app;
    }

    private static boolean tableExists(String name) throws Exception {
        try (Connection c = DriverManager.getConnection(URL, "postgres", "");
                ResultSet rs = c.getMetaData().getTables(null, null, name, null)) {
            return rs.next();
        }
    }

    @Test
    void createTablesReallyCreatesThem() throws Exception {
        LockClient client = start().getBean(LockClient.class);
        assertThat(tableExists(prefix + "locks"))
                .as("dlock.jdbc.create-tables created them")
                .isTrue();
        assertThat(tableExists(prefix + "entries")).isTrue();
        client.lock("created").acquire(java.time.Duration.ofSeconds(5)).close();
    }

    @Test
    void theAnnotatedMethodNeverRunsConcurrentlyForOneKey() throws Exception {
        // Tables made beforehand, so that this case checks exclusion alone.
        LockClient.connect(URL + "?user=postgres&dlock.createTables=true&dlock.tablePrefix=" + prefix)
                .close();
        List<ConfigurableApplicationContext> two = List.of(start(), start());
        AtomicInteger inside = new AtomicInteger();
        AtomicInteger maxInside = new AtomicInteger();
        AtomicInteger calls = new AtomicInteger();
        AtomicInteger notOneHolderInStore = new AtomicInteger();
        List<Long> tokens = new CopyOnWriteArrayList<>();
        ExecutorService threads = Executors.newFixedThreadPool(8);
        try {
            List<Future<?>> done = new ArrayList<>();
            for (int t = 0; t < 8; t++) {
                ConfigurableApplicationContext app = two.get(t % 2);
                LockedService service = app.getBean(LockedService.class);
                LockClient client = app.getBean(LockClient.class);
                done.add(threads.submit(() -> {
                    for (int i = 0; i < 20; i++) {
                        service.shipPatiently(7, () -> {
                            maxInside.accumulateAndGet(inside.incrementAndGet(), Math::max);
                            List<LockInfo.Holder> holders = client.describe("order:7").stream()
                                    .flatMap(info -> info.holders().stream())
                                    .toList();
                            if (holders.size() == 1) {
                                tokens.add(holders.get(0).fencingToken());
                            } else {
                                notOneHolderInStore.incrementAndGet();
                            }
                            calls.incrementAndGet();
                            inside.decrementAndGet();
                            return "shipped";
                        });
                    }
                    return null;
                }));
            }
            for (Future<?> f : done) {
                f.get(150, TimeUnit.SECONDS);
            }
        } finally {
            threads.shutdownNow();
        }
        assertThat(calls.get()).isEqualTo(160);
        assertThat(maxInside.get()).as("calls inside at once for one key").isEqualTo(1);
        assertThat(notOneHolderInStore.get())
                .as("calls that the store did not show as the one holder")
                .isZero();
        // The store's token, seen by calls in the order they ran: it never goes back. It repeats while the
        // engine passes one store grant between threads of an application (cohort hand-off, JDBC reserves
        // 16 tokens per grant), and steps up when the other application gets the lock.
        assertThat(tokens).isSorted();
        assertThat(new HashSet<>(tokens))
                .as("store grants (both applications took turns)")
                .hasSizeGreaterThan(1);
    }

    @Test
    void aStartFailureAdvisesCreatingTablesOnlyWhenTheyAreMissing() {
        DlockFailureAnalyzer analyzer = new DlockFailureAnalyzer();
        FailureAnalysis down = analyzer.analyze(new IllegalStateException(
                "wrapped",
                new LockBackendException("dlock startup check failed: the lock store at " + URL
                        + " (the application's DataSource, tables " + prefix + "*) did not answer: Connection to"
                        + " 127.0.0.1:5432 refused")));
        assertThat(down.getAction()).doesNotContain("create-tables");
        FailureAnalysis missing = analyzer.analyze(new LockBackendException("dlock could not open the lock store at "
                + URL + ": cannot open the JDBC lock backend: table " + prefix + "locks is missing or unreadable"
                + " (ERROR: relation does not exist); create it with dev/dlock/jdbc/postgresql.sql from the"
                + " dlock-jdbc jar, or enable createTables"));
        assertThat(missing.getAction()).contains("dlock.jdbc.create-tables=true");
    }
}
