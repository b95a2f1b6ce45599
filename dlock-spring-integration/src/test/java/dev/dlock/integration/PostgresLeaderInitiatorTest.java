package dev.dlock.integration;

import java.sql.Connection;
import java.sql.DriverManager;
import java.sql.Statement;
import java.util.concurrent.ThreadLocalRandom;
import org.junit.jupiter.api.AfterAll;

/**
 * The leader initiator on the machine's PostgreSQL (database {@code test} on the default port;
 * scripts/test.sh installs and starts it), in tables of this class's own random prefix.
 */
class PostgresLeaderInitiatorTest extends LeaderInitiatorContract {
    private static final String PREFIX =
            "t_si_" + Integer.toHexString(ThreadLocalRandom.current().nextInt(0x100000, 0xffffff)) + "_";

    @AfterAll
    static void dropTables() throws Exception {
        try (Connection c = DriverManager.getConnection("jdbc:postgresql://127.0.0.1:5432/test?user=postgres");
                Statement st = c.createStatement()) {
            st.execute("DROP TABLE IF EXISTS " + PREFIX + "entries");
            st.execute("DROP TABLE IF EXISTS " + PREFIX + "locks");
        }
    }

    @Override
    String uri(int port) {
        return "jdbc:postgresql://127.0.0.1:" + port + "/test?user=postgres&dlock.createTables=true&dlock.tablePrefix="
                + PREFIX;
    }

    @Override
    int storePort() {
        return 5432;
    }
}
