package dev.dlock.cli;

import static org.assertj.core.api.Assertions.assertThat;

import dev.dlock.Lease;
import dev.dlock.LockClient;
import java.nio.file.Path;
import java.util.Optional;
import java.util.UUID;
import org.junit.jupiter.api.AfterEach;
import org.junit.jupiter.api.BeforeEach;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;

/**
 * {@code run --permits N} (a semaphore) and {@code run --shared} / {@code --exclusive} (a read-write lock) in
 * this JVM on the in-memory store, with real child processes for CMD; holders from another client.
 */
class RunModesTest {
    @TempDir
    Path dir;

    String backend;
    LockClient other;

    @BeforeEach
    void setUp() {
        backend = "mem:modes-" + UUID.randomUUID();
        other = LockClient.connect(backend);
    }

    @AfterEach
    void tearDown() {
        other.close();
    }

    private Result run(String... args) {
        TestEnvironment env = new TestEnvironment(dir);
        int code = env.parse(args).execute();
        return new Result(code, env.out(), env.err());
    }

    private record Result(int code, String out, String err) {}

    @Test
    void permitsAdmitNRunsAtOnce() {
        Lease first = other.semaphore("pool", 2).acquire(java.time.Duration.ofSeconds(5));
        Result second = run(
                "run",
                "--backend",
                backend,
                "--permits",
                "2",
                "--nonblock",
                "pool",
                "--",
                "sh",
                "-c",
                "test -n \"$DLOCK_FENCING_TOKEN\"");
        assertThat(second.code()).as(second.err()).isZero();

        Lease another = other.semaphore("pool", 2).acquire(java.time.Duration.ofSeconds(5));
        Result third = run("run", "--backend", backend, "--permits", "2", "--nonblock", "pool", "--", "true");
        assertThat(third.code()).isEqualTo(1);
        assertThat(third.err()).contains("'pool' is busy, held by 2 holders: ");
        Result plain = run("run", "--backend", backend, "--nonblock", "pool", "--", "true");
        assertThat(plain.code()).as("the plain lock 'pool' is another lock").isZero();
        first.close();
        another.close();
    }

    @Test
    void sharedRunsOverlapExclusiveOnesDoNot() {
        Lease reader = other.readWriteLock("db").readLock().acquire(java.time.Duration.ofSeconds(5));
        assertThat(run("run", "--backend", backend, "--shared", "--nonblock", "db", "--", "true")
                        .code())
                .isZero();
        Result writer = run("run", "--backend", backend, "--exclusive", "--nonblock", "db", "--", "true");
        assertThat(writer.code()).isEqualTo(1);
        assertThat(writer.err()).contains("'db' is busy, held by ");
        reader.close();

        Lease write = other.readWriteLock("db").writeLock().acquire(java.time.Duration.ofSeconds(5));
        assertThat(run("run", "--backend", backend, "-s", "-n", "db", "--", "true")
                        .code())
                .isEqualTo(1);
        write.close();
        assertThat(run("run", "--backend", backend, "-x", "-n", "db", "--", "true")
                        .code())
                .isZero();
        Optional<Lease> free = other.readWriteLock("db").writeLock().tryAcquire();
        assertThat(free).as("released after the command").isPresent();
        free.get().close();
    }

    @Test
    void modesExcludeEachOtherAndPermitsMustBePositive() {
        Result both = run("run", "--backend", backend, "--shared", "--exclusive", "db", "--", "true");
        assertThat(both.code()).isEqualTo(2);
        assertThat(both.err()).contains("--permits, --shared and --exclusive exclude each other");
        Result semAndShared = run("run", "--backend", backend, "--permits", "3", "--shared", "db", "--", "true");
        assertThat(semAndShared.code()).isEqualTo(2);
        Result zero = run("run", "--backend", backend, "--permits", "0", "db", "--", "true");
        assertThat(zero.code()).isEqualTo(2);
        assertThat(zero.err()).contains("--permits must be at least 1, got 0");
    }
}
