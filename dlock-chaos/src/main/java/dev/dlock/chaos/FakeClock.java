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
    /**
     * How often a process re-reads its timestamp file (libfaketime's {@code FAKETIME_CACHE_DURATION}): a
     * step, and the step back, take effect in the process up to this long after the file was written.
     */
    static final long REREAD_MILLIS = 1_000;

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
                "FAKETIME_CACHE_DURATION", Long.toString(REREAD_MILLIS / 1_000));
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
