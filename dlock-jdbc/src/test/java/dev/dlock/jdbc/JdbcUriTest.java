package dev.dlock.jdbc;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;

import dev.dlock.Lease;
import dev.dlock.LockBackendException;
import dev.dlock.LockClient;
import java.time.Duration;
import org.junit.jupiter.api.Test;

class JdbcUriTest {
    @Test
    void dlockParametersAreTakenOutOfTheQuery() {
        JdbcUri uri = JdbcUri.parse("jdbc:postgresql://db:5432/app?user=u&dlock.tablePrefix=x_&password=p"
                + "&dlock.createTables=true&dlock.advisory=true&dlock.threads=2");
        assertThat(uri.jdbcUrl()).isEqualTo("jdbc:postgresql://db:5432/app?user=u&password=p");
        assertThat(uri.dialect()).isEqualTo(Dialect.POSTGRESQL);
        assertThat(uri.options()).isEqualTo(new JdbcOptions("x_", true, true, 2));
    }

    @Test
    void h2SettingsAndDefaults() {
        JdbcUri uri = JdbcUri.parse("jdbc:h2:mem:a;DB_CLOSE_DELAY=-1;dlock.createTables=true");
        assertThat(uri.jdbcUrl()).isEqualTo("jdbc:h2:mem:a;DB_CLOSE_DELAY=-1");
        assertThat(uri.dialect()).isEqualTo(Dialect.H2);
        assertThat(uri.options()).isEqualTo(new JdbcOptions("dlock_", true, false, 4));
        assertThat(JdbcUri.parse("jdbc:mysql://h/db").dialect()).isEqualTo(Dialect.MYSQL);
        assertThat(JdbcUri.parse("jdbc:mariadb://h/db?dlock.threads=1").jdbcUrl())
                .isEqualTo("jdbc:mariadb://h/db");
    }

    @Test
    void badParametersAreRejectedWithTheirName() {
        assertThatThrownBy(() -> JdbcUri.parse("jdbc:h2:mem:a;dlock.tablePrefx=x_"))
                .isInstanceOf(IllegalArgumentException.class)
                .hasMessageContaining("dlock.tablePrefx");
        assertThatThrownBy(() -> JdbcUri.parse("jdbc:postgresql://h/db?dlock.tablePrefix=X;drop"))
                .isInstanceOf(IllegalArgumentException.class)
                .hasMessageContaining("table prefix");
        assertThatThrownBy(() -> JdbcUri.parse("jdbc:postgresql://h/db?dlock.createTables=yes"))
                .hasMessageContaining("true or false");
        assertThatThrownBy(() -> JdbcUri.parse("jdbc:h2:mem:a;dlock.advisory=true"))
                .hasMessageContaining("advisory");
        assertThatThrownBy(() -> JdbcUri.parse("jdbc:oracle:thin:@h:1521:x")).hasMessageContaining("unsupported");
        assertThatThrownBy(() ->
                        JdbcBackends.builder(new org.h2.jdbcx.JdbcDataSource()).threads(0))
                .hasMessageContaining("threads");
    }

    @Test
    void everySchemeConnectsThroughTheServiceLoader() throws Exception {
        String prefix = TestDatabases.prefix("uri");
        String[] urls = {
            TestDatabases.postgres(TestDatabases.PG_PORT),
            TestDatabases.mariadb(TestDatabases.MARIADB_PORT),
            "jdbc:mysql://127.0.0.1:3306/test?user=root&permitMysqlScheme",
            "jdbc:h2:mem:uri_test;DB_CLOSE_DELAY=-1"
        };
        try {
            for (String url : urls) {
                String sep = url.startsWith("jdbc:h2:") ? ";" : "&";
                String full = url + sep + "dlock.tablePrefix=" + prefix + sep + "dlock.createTables=true";
                try (LockClient client = LockClient.connect(full);
                        Lease lease = client.lock("uri").acquire(Duration.ofSeconds(5))) {
                    assertThat(lease.fencingToken()).as(url).isPositive();
                }
            }
        } finally {
            TestDatabases.dropTables(urls[0], prefix);
            TestDatabases.dropTables(urls[1], prefix);
            TestDatabases.dropTables(urls[3], prefix);
        }
    }

    @Test
    void missingTablesAreReportedWithTheDdlToRun() {
        assertThatThrownBy(() -> LockClient.connect("jdbc:h2:mem:no_tables;DB_CLOSE_DELAY=-1"))
                .isInstanceOf(LockBackendException.class)
                .hasMessageContaining("dlock_locks")
                .hasMessageContaining("dev/dlock/jdbc/h2.sql");
    }
}
