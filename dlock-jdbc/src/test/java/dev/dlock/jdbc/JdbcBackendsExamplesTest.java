package dev.dlock.jdbc;

import static org.assertj.core.api.Assertions.assertThat;

import dev.dlock.Lease;
import dev.dlock.LockClient;
import dev.dlock.spi.LockBackendFactory;
import dev.dlock.tck.JavadocExamples;
import java.nio.file.Path;
import java.sql.Connection;
import java.sql.ResultSet;
import java.sql.SQLException;
import java.time.Duration;
import java.util.ArrayList;
import java.util.List;
import javax.sql.DataSource;
import org.h2.jdbcx.JdbcDataSource;
import org.junit.jupiter.api.Test;

/**
 * The example of {@link JdbcBackends}' class javadoc, run against an in-memory H2 database; the javadoc
 * holds a copy of the region marked below, and {@link #javadocHoldsTheseExamples()} checks it is the same.
 */
class JdbcBackendsExamplesTest {
    private final List<Long> reports = new ArrayList<>();
    private DataSource dataSource;

    @Test
    void javadocHoldsTheseExamples() {
        assertThat(JavadocExamples.check(
                        Path.of("src/main/java/dev/dlock/jdbc/JdbcBackends.java"),
                        Path.of("src/test/java/dev/dlock/jdbc/JdbcBackendsExamplesTest.java")))
                .containsExactly("jdbc-datasource");
    }

    @Test
    void dataSourceOfTheApplication() throws SQLException {
        JdbcDataSource h2 = new JdbcDataSource();
        h2.setURL("jdbc:h2:mem:examples;DB_CLOSE_DELAY=-1");
        dataSource = h2;
        // example: jdbc-datasource
        LockBackendFactory backend = JdbcBackends.builder(dataSource)
                .tablePrefix("app_lock_")
                .createTables(true)
                .build();
        try (LockClient locks = LockClient.builder(backend).build()) {
            try (Lease lease = locks.lock("report").acquire(Duration.ofSeconds(5))) {
                writeReport(lease.fencingToken());
            }
        }
        // end example
        assertThat(reports).hasSize(1);
        try (Connection c = dataSource.getConnection();
                ResultSet tables = c.getMetaData().getTables(null, null, "APP_LOCK_%", null)) {
            List<String> names = new ArrayList<>();
            while (tables.next()) {
                names.add(tables.getString("TABLE_NAME"));
            }
            assertThat(names).as("created with the prefix").contains("APP_LOCK_LOCKS", "APP_LOCK_ENTRIES");
        }
    }

    private void writeReport(long fencingToken) {
        LockBackendFactory other =
                JdbcBackends.builder(dataSource).tablePrefix("app_lock_").build();
        try (LockClient otherClient = LockClient.builder(other).build()) {
            assertThat(otherClient.lock("report").tryAcquire())
                    .as("held by the example")
                    .isEmpty();
        }
        reports.add(fencingToken);
    }
}
