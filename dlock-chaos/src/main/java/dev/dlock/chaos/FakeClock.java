package dev.dlock.chaos;

import java.io.IOException;
import java.io.UncheckedIOException;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.List;
import java.util.Map;

/**
 * A clock offset for one process through libfaketime (Debian package {@code faketime}): the process is
 * started with {@code LD_PRELOAD} of the library and a timestamp file holding the offset in seconds;
 * writing the file steps that process's wall and monotonic clocks within a second, and no other process.
 *
 * <p>Failure modes: without the library {@link #library()} is null and clock faults are reported as
 * unavailable.
 */
final class FakeClock {
    /** How long a process keeps what it read of its timestamp file (libfaketime's {@code FAKETIME_CACHE_DURATION}). */
    private static final int CACHE_SECONDS = 1;

    /**
     * How long after the file was written a step, and the step back, may still not be in effect in a
     * process: two cache periods, since libfaketime counts the period in whole seconds of the clock (a read
     * just after a second began lasts until two seconds later). Measured here (2026-11-27, a process reading
     * its clock every 2 ms, the file rewritten 65 times at random moments): the change was seen 0.30 to
     * 1.70 s after the write. With one period counted instead, a PostgreSQL session still 3 s behind 1.14 s
     * after a step back made a grant that the fault suite counted as not told first.
     */
    static final long REREAD_MILLIS = 2_000L * CACHE_SECONDS;

    private static final List<String> CANDIDATES = List.of(
            "/usr/lib/x86_64-linux-gnu/faketime/libfaketimeMT.so.1",
            "/usr/lib/aarch64-linux-gnu/faketime/libfaketimeMT.so.1",
            "/usr/lib/faketime/libfaketimeMT.so.1");

    private final Path file;
    private volatile long offsetSeconds;

    FakeClock(Path file) {
        this.file = file;
        set(0);
    }

    /** The libfaketime library, or null when it is not installed. */
    static String library() {
        return CANDIDATES.stream()
                .filter(p -> Files.exists(Path.of(p)))
                .findFirst()
                .orElse(null);
    }

    /** The environment that puts a process on this clock. */
    Map<String, String> environment() {
        return Map.of(
                "LD_PRELOAD", library(),
                "FAKETIME_TIMESTAMP_FILE", file.toString(),
                "FAKETIME_CACHE_DURATION", Integer.toString(CACHE_SECONDS));
    }

    /** Steps the clock to {@code seconds} away from real time (negative: into the past). */
    void set(long seconds) {
        try {
            Files.writeString(file, (seconds >= 0 ? "+" : "") + seconds + "\n");
            offsetSeconds = seconds;
        } catch (IOException e) {
            throw new UncheckedIOException(e);
        }
    }

    long offsetSeconds() {
        return offsetSeconds;
    }
}
