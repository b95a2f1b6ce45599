package dev.dlock.jdbc;

import dev.dlock.tck.TcpProxy;
import java.sql.Connection;
import java.sql.DriverManager;
import java.sql.SQLException;
import java.time.Duration;

/** Waits until a database answers through a restored proxy. */
final class ContractSupport {
    private ContractSupport() {}

    static void restoreAndWait(TcpProxy proxy, String url) throws Exception {
        proxy.restore();
        long deadline = System.nanoTime() + Duration.ofSeconds(30).toNanos();
        while (true) {
            try (Connection c = DriverManager.getConnection(url)) {
                if (c.isValid(2)) {
                    return;
                }
            } catch (SQLException e) {
                if (System.nanoTime() - deadline > 0) {
                    throw new AssertionError("the database did not answer through the proxy again", e);
                }
            }
            Thread.sleep(100);
        }
    }
}
