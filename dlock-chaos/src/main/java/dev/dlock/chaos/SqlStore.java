package dev.dlock.chaos;

import java.nio.file.Path;
import java.sql.Connection;
import java.sql.ResultSet;
import java.sql.SQLException;
import java.sql.Statement;
import java.util.EnumSet;
import java.util.Random;
import java.util.Set;

/**
 * PostgreSQL or MariaDB as the lock store (dlock-jdbc's lease tables, prefix {@code chaos_}), on a server
 * of the suite's own ({@link SqlServer}).
 *
 * <p>Failure modes injected: crash (SIGKILL of every server process, crash recovery on restart), clean
 * restart, pause of every server process, and the server's clock stepped, which moves the database time
 * that lease expiry is computed from.
 */
final class SqlStore implements Store {
    private final SqlServer server;

    private SqlStore(SqlServer server) {
        this.server = server;
    }

    static Store postgres(String host, Path dir) {
        return new SqlStore(SqlServer.postgres(host, dir, true));
    }

    static Store mariadb(String host, Path dir) {
        return new SqlStore(SqlServer.mariadb(host, dir, true));
    }

    @Override
    public String clientUri() {
        return server.jdbcUrl() + "&dlock.createTables=true&dlock.tablePrefix=chaos_";
    }

    @Override
    public long marginMillis() {
        return 10_000;
    }

    @Override
    public Set<Fault> faults() {
        Set<Fault> set = EnumSet.of(Fault.KILL_STORE, Fault.RESTART_STORE, Fault.PAUSE_STORE);
        if (server.clock() != null) {
            set.add(Fault.CLOCK_STORE);
        }
        return set;
    }

    @Override
    public Injection inject(Fault fault, Random random, long durationMillis) {
        return switch (fault) {
            case KILL_STORE -> {
                server.kill();
                yield new Injection(server.address(), server::start);
            }
            case RESTART_STORE -> {
                server.stop();
                server.start();
                yield new Injection(server.address(), () -> {});
            }
            case PAUSE_STORE -> {
                server.pause();
                yield new Injection(server.address(), server::resume);
            }
            case CLOCK_STORE -> {
                long step = (random.nextBoolean() ? 1 : -1) * (2 + random.nextInt(6));
                server.clock().set(step);
                yield new Injection(server.address() + " clock " + step + "s", () -> server.clock()
                        .set(0));
            }
            default -> throw new IllegalArgumentException(fault.id());
        };
    }

    @Override
    public long leftovers() {
        try (Connection c = server.connect();
                Statement st = c.createStatement()) {
            String db = server.jdbcUrl().startsWith("jdbc:mariadb") ? "chaos." : "";
            try (ResultSet rs = st.executeQuery("SELECT (SELECT count(*) FROM " + db
                    + "chaos_locks WHERE owner IS NOT NULL) + (SELECT count(*) FROM " + db + "chaos_entries)")) {
                rs.next();
                return rs.getLong(1);
            }
        } catch (SQLException e) {
            return -1;
        }
    }

    @Override
    public void close() {
        server.close();
    }
}
