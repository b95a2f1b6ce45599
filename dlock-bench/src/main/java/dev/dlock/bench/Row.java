package dev.dlock.bench;

/**
 * One line of {@code results.json}: a scenario run by one system.
 *
 * <p>For the lock scenarios {@code opsPerS} is completed lock/unlock cycles per second ({@code handoff}:
 * hand-offs per second) and the percentiles are of one cycle ({@code handoff}: of the time from a release
 * to the next holder's entry). For {@code held} {@code opsPerS} is the store commands per second the
 * holding client sends while it only holds (renewal traffic) and the percentiles are of acquiring one of
 * the leases. {@code threads} is per client. {@code violations} counts times two holders were inside at
 * once (plus lost counter updates; for {@code held}, leases another client could take during the hold).
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
        long violations) {}
