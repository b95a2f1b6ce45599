/**
 * The SQL backend (PostgreSQL, MariaDB/MySQL, H2) over JDBC with a HikariCP pool. Serves {@code jdbc:}
 * URIs through {@code LockClient.connect}; {@code JdbcBackends} takes a {@link javax.sql.DataSource}. The
 * PostgreSQL driver is optional: used for its notifications when the data source is PostgreSQL.
 */
module dev.dlock.jdbc {
    requires transitive dev.dlock.core;
    requires transitive java.sql;
    requires com.zaxxer.hikari;
    requires static org.postgresql.jdbc;

    exports dev.dlock.jdbc;

    provides dev.dlock.spi.LockBackendProvider with
            dev.dlock.jdbc.JdbcBackendProvider;
}
