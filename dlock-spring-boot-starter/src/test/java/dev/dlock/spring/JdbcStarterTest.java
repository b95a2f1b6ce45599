package dev.dlock.spring;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;

import dev.dlock.LockBackendException;
import dev.dlock.LockClient;
import dev.dlock.testsupport.FreePorts;
import java.sql.Connection;
import java.sql.DriverManager;
import java.sql.ResultSet;
import java.sql.Statement;
import java.util.HashMap;
import java.util.List;
import java.util.Map;
import org.junit.jupiter.api.Test;
import org.springframework.boot.WebApplicationType;
import org.springframework.context.ConfigurableApplicationContext;

/**
 * The starter contract on the machine's PostgreSQL (127.0.0.1:5432, database {@code test}, user {@code
 * postgres}), reached through the application's own {@code DataSource} ({@code spring.datasource.*}, a
 * Hikari pool made by Spring Boot), with tables of a prefix unique to this run that are dropped at the end;
 * plus the table check at startup and a start from a {@code jdbc:} URI.
 */
class JdbcStarterTest extends StarterContractTest {
    private static final String URL = "jdbc:postgresql://127.0.0.1:5432/test";

    private final String prefix = "starter_" + Long.toHexString(System.nanoTime()) + "_";
    private int downPort;

    @Override
    void startStore() throws Exception {
        downPort = FreePorts.next();
        try (Connection c = DriverManager.getConnection(URL, "postgres", "")) {
            assertThat(c.isValid(5))
                    .as("PostgreSQL at " + URL + " (scripts/test.sh starts it)")
                    .isTrue();
        }
    }

    @Override
    void stopStore() throws Exception {
        try (Connection c = DriverManager.getConnection(URL, "postgres", "");
                Statement st = c.createStatement()) {
            st.execute("DROP TABLE IF EXISTS " + prefix + "locks");
            st.execute("DROP TABLE IF EXISTS " + prefix + "entries");
        }
    }

    @Override
    Map<String, Object> storeProperties() {
        return Map.of(
                "spring.datasource.url",
                URL,
                "spring.datasource.username",
                "postgres",
                "dlock.jdbc.table-prefix",
                prefix,
                "dlock.jdbc.create-tables",
                "true");
    }

    @Override
    String peerUri() {
        return URL + "?user=postgres&dlock.tablePrefix=" + prefix;
    }

    @Override
    Map<String, Object> downStoreProperties() {
        return Map.of(
                "spring.datasource.url",
                "jdbc:postgresql://127.0.0.1:" + downPort + "/test",
                "spring.datasource.username",
                "postgres",
                "spring.datasource.hikari.connection-timeout",
                "1000",
                "dlock.jdbc.table-prefix",
                prefix);
    }

    @Override
    String downStoreText() {
        return "the lock store at jdbc:postgresql://127.0.0.1:" + downPort + "/test (the application's DataSource";
    }

    @Override
    List<String> unusedStoreAutoConfigurations() {
        return List.of(REDIS_AUTO_CONFIGURATION);
    }

    @Test
    void missingTablesFailTheStartUnlessCreatingThemIsAllowed() throws Exception {
        // Allowed, the main application created its tables (dlock.jdbc.create-tables=true).
        assertThat(tableExists(prefix + "locks")).isTrue();
        String fresh = prefix + "x_";
        Map<String, Object> properties = new HashMap<>(storeProperties());
        properties.put("dlock.jdbc.table-prefix", fresh);
        properties.put("dlock.jdbc.create-tables", "false");
        assertThatThrownBy(() -> start(WebApplicationType.NONE, properties)).satisfies(e -> {
            Throwable t = e;
            while (t != null && !(t instanceof LockBackendException)) {
                t = t.getCause();
            }
            assertThat(t).isNotNull();
            assertThat(t.getMessage())
                    .contains("the lock store at " + URL)
                    .contains("table " + fresh + "locks is missing");
        });
        assertThat(tableExists(fresh + "locks")).isFalse();
    }

    @Test
    void theStoreIsTheApplicationsDataSourceOrTheUri() {
        assertThat(app().getBean(DlockStore.class).description())
                .isEqualTo(URL + " (the application's DataSource, tables " + prefix + "*)");
        // The application's DataSource is there too: an explicit dlock.uri wins.
        Map<String, Object> properties = new HashMap<>(storeProperties());
        properties.put("dlock.uri", peerUri());
        properties.put("dlock.namespace", "by-uri-" + prefix.replace('_', '-'));
        try (ConfigurableApplicationContext byUri = start(WebApplicationType.NONE, properties)) {
            assertThat(byUri.getBean(DlockStore.class).description()).isEqualTo(peerUri());
            LockClient client = byUri.getBean(LockClient.class);
            LockedService service = byUri.getBean(LockedService.class);
            long token = service.tokenWhile(
                    9, null, () -> assertThat(client.describe("order:9")).hasSize(1));
            assertThat(service.token(9, null)).isGreaterThan(token);
        }
    }

    private static boolean tableExists(String name) throws Exception {
        try (Connection c = DriverManager.getConnection(URL, "postgres", "");
                ResultSet rs = c.getMetaData().getTables(null, null, name, null)) {
            return rs.next();
        }
    }
}
