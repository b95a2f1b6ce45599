package dev.dlock.bench;

import dev.dlock.testsupport.RedisProcess;
import java.util.ArrayList;
import java.util.List;

/**
 * Independent {@code redis-server} processes on free local ports, without persistence, for the Redlock
 * systems (dlock's {@code redlock://} and Redisson's {@code RedissonRedLock}/{@code RedissonMultiLock}).
 * Started by the run when such a system is selected, killed at its end.
 *
 * <p>Failure modes: without {@code redis-server} on the PATH, starting fails with advice; a failed start
 * kills the masters already started; {@link #close()} kills them all and deletes their directories.
 */
final class LocalRedisMasters implements AutoCloseable {
    private final List<RedisProcess> masters = new ArrayList<>();

    private LocalRedisMasters() {}

    static LocalRedisMasters start(int count) {
        LocalRedisMasters started = new LocalRedisMasters();
        try {
            for (int i = 0; i < count; i++) {
                started.masters.add(RedisProcess.start());
            }
            return started;
        } catch (RuntimeException e) {
            started.close();
            throw e;
        }
    }

    List<Endpoints.HostPort> addresses() {
        return masters.stream()
                .map(m -> new Endpoints.HostPort(m.host(), m.port()))
                .toList();
    }

    @Override
    public void close() {
        masters.forEach(RedisProcess::close);
    }
}
