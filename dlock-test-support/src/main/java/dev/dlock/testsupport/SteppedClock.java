package dev.dlock.testsupport;

import java.io.IOException;
import java.io.InputStream;
import java.io.UncheckedIOException;
import java.nio.charset.StandardCharsets;
import java.nio.file.Files;
import java.nio.file.Path;
import java.nio.file.StandardCopyOption;
import java.time.Duration;
import java.util.Map;
import java.util.concurrent.TimeUnit;

/**
 * A wall clock a test can step, for the processes it starts ({@link RedisProcess#start(SteppedClock,
 * String...)}): what an NTP step or an operator does to a store's clock.
 *
 * <p>Design note. A small preload library ({@code steppedclock.c}, built here with the system's C compiler
 * on first use) adds an offset read from a file to the process's real-time clock ({@code gettimeofday},
 * {@code time}, {@code clock_gettime(CLOCK_REALTIME)}); monotonic clocks are left alone, as a real step
 * leaves them. libfaketime would do the same, but it cannot run Debian's {@code redis-server}: its jemalloc
 * reads the clock while libfaketime initialises, and the server dies of the recursion. The preload uses
 * raw system calls only, so it can. A step takes effect in the process within 10 ms (it re-reads the
 * file at most that often).
 *
 * <p>Needs a C compiler ({@code cc}: {@code apt-get install gcc}); without one, the constructor fails
 * saying so. Linux only.
 *
 * <pre>{@code
 * SteppedClock clock = new SteppedClock();
 * try (RedisProcess redis = RedisProcess.start(clock)) {
 *     clock.step(Duration.ofSeconds(5)); // the server's clock is now 5 s ahead
 * }
 * }</pre>
 */
public final class SteppedClock {
    private static final Duration COMPILE_WITHIN = Duration.ofSeconds(60);

    private final Path library;
    private final Path offsetFile;
    private long offsetMillis;

    /**
     * A clock at real time (offset 0), with its preload library built in a temporary directory.
     *
     * @throws IllegalStateException when the library cannot be built (no C compiler)
     */
    public SteppedClock() {
        try {
            Path dir = Files.createTempDirectory("dlock-stepped-clock-");
            Path source = dir.resolve("steppedclock.c");
            try (InputStream in = SteppedClock.class.getResourceAsStream("steppedclock.c")) {
                if (in == null) {
                    throw new IllegalStateException("steppedclock.c is missing from dlock-test-support's jar");
                }
                Files.copy(in, source);
            }
            library = dir.resolve("libsteppedclock.so");
            offsetFile = dir.resolve("offset");
            write(0);
            compile(source, dir);
        } catch (IOException e) {
            throw new UncheckedIOException(e);
        }
    }

    private void compile(Path source, Path dir) throws IOException {
        Path log = dir.resolve("cc.log");
        Process cc;
        try {
            cc = new ProcessBuilder("cc", "-shared", "-fPIC", "-O2", "-o", library.toString(), source.toString())
                    .redirectErrorStream(true)
                    .redirectOutput(log.toFile())
                    .start();
        } catch (IOException e) {
            throw new IllegalStateException(
                    "a stepped clock needs a C compiler to build its preload library: apt-get install gcc", e);
        }
        try {
            if (!cc.waitFor(COMPILE_WITHIN.toMillis(), TimeUnit.MILLISECONDS) || cc.exitValue() != 0) {
                cc.destroyForcibly();
                throw new IllegalStateException("cc could not build the stepped clock's library: "
                        + Files.readString(log, StandardCharsets.UTF_8));
            }
        } catch (InterruptedException e) {
            Thread.currentThread().interrupt();
            cc.destroyForcibly();
            throw new IllegalStateException("interrupted while building the stepped clock's library", e);
        }
    }

    /**
     * The environment that puts a process on this clock.
     *
     * @return {@code LD_PRELOAD} and the offset file's variable
     */
    public Map<String, String> environment() {
        return Map.of("LD_PRELOAD", library.toString(), "DLOCK_CLOCK_OFFSET_FILE", offsetFile.toString());
    }

    /**
     * Steps the clock by {@code by} (negative: back), on top of the steps before; in effect in every
     * process on this clock within 10 ms.
     *
     * @param by the step, whole milliseconds
     */
    public synchronized void step(Duration by) {
        write(offsetMillis + by.toMillis());
    }

    /**
     * How far the clock is from real time now.
     *
     * @return the sum of the steps made
     */
    public synchronized Duration offset() {
        return Duration.ofMillis(offsetMillis);
    }

    private synchronized void write(long millis) {
        try {
            Path next = offsetFile.resolveSibling("offset.next");
            Files.writeString(next, Long.toString(millis), StandardCharsets.US_ASCII);
            Files.move(next, offsetFile, StandardCopyOption.ATOMIC_MOVE);
            offsetMillis = millis;
        } catch (IOException e) {
            throw new UncheckedIOException(e);
        }
    }
}
