package dev.dlock.etcd;

import dev.dlock.LockClient;
import java.time.Duration;

/**
 * Opens the first etcd client of a fresh JVM and prints how long the open took and how it ended: {@code
 * <millis> <outcome>}. Run by {@link EtcdConnectTest} in a child process, so that jetcd's code is loaded
 * for the first time, as in an application's first connect.
 */
final class FirstConnectProbe {
    private FirstConnectProbe() {}

    public static void main(String[] args) {
        String uri = args[0];
        Duration timeout = Duration.ofMillis(Long.parseLong(args[1]));
        long start = System.nanoTime();
        String outcome;
        try (LockClient client =
                LockClient.builder(uri).operationTimeout(timeout).build()) {
            outcome = "connected";
        } catch (RuntimeException e) {
            outcome = e.getClass().getSimpleName() + ": " + e.getMessage();
        }
        System.out.println((System.nanoTime() - start) / 1_000_000 + " " + outcome);
        System.exit(0);
    }
}
