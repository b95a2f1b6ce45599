package dev.dlock.bench;

import java.util.List;

/**
 * One line of {@code results.json}: a scenario run by one system.
 *
 * <p>For the lock scenarios {@code opsPerS} is completed lock/unlock cycles per second ({@code handoff}:
 * hand-offs per second) and the percentiles are of one cycle ({@code handoff}: of the time from a release
 * to the next holder's entry). For {@code held} {@code opsPerS} is the store commands per second the
 * holding client sends while it only holds (renewal traffic) and the percentiles are of acquiring one of
 * the leases. {@code threads} is per client. {@code violations} counts times two holders were inside at
 * once (plus lost counter updates; for {@code held}, leases another client could take during the hold).
 * {@code grantsPerClient} counts the cycles each client completed in the measuring windows (empty for
 * {@code held} and {@code handoff}); {@link #minShare()} and {@link #maxShare()} compare them with the fair
 * share (total / clients): 1 is fair, 0 means a client starved.
 */
record Row(
        String scenario,
        String system,
        String backend,
        int clients,
        int threads,
        double seconds,
        double opsPerS,
        double p50Us,
        double p99Us,
        long violations,
        List<Long> grantsPerClient) {

    Row {
        grantsPerClient = List.copyOf(grantsPerClient);
    }

    /** The smallest client's share of the grants against the fair share; 1 when not measured. */
    double minShare() {
        return share(true);
    }

    /** The largest client's share of the grants against the fair share; 1 when not measured. */
    double maxShare() {
        return share(false);
    }

    private double share(boolean min) {
        long total = grantsPerClient.stream().mapToLong(Long::longValue).sum();
        if (grantsPerClient.isEmpty() || total == 0) {
            return 1;
        }
        double fair = (double) total / grantsPerClient.size();
        long pick = min
                ? grantsPerClient.stream().mapToLong(Long::longValue).min().orElse(0)
                : grantsPerClient.stream().mapToLong(Long::longValue).max().orElse(0);
        return Math.round(pick / fair * 1000) / 1000.0;
    }
}
