package dev.dlock.internal;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatCode;

import dev.dlock.Lease;
import dev.dlock.LockClient;
import dev.dlock.spi.LockBackend;
import dev.dlock.spi.LockBackendProvider;
import dev.dlock.spi.LockKey;
import java.lang.reflect.InvocationTargetException;
import java.lang.reflect.Proxy;
import java.time.Duration;
import java.util.Map;
import java.util.concurrent.ConcurrentHashMap;
import java.util.concurrent.atomic.AtomicBoolean;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.Timeout;

/** {@code LockClient.close()} when leases change state while it releases them. */
@Timeout(30)
class EngineCloseTest {
    /**
     * Close takes a snapshot of the held leases and releases each. A lease that stops being held after the
     * snapshot (its holder closes it, or the watchdog declares it lost at its deadline) must be skipped,
     * and close must still stop the scheduler and close the backend.
     */
    @Test
    void closeSkipsLeasesThatEndedAfterItsSnapshot() {
        Map<String, Lease> leases = new ConcurrentHashMap<>();
        AtomicBoolean otherClosed = new AtomicBoolean();
        AtomicBoolean backendClosed = new AtomicBoolean();
        LockClient client = LockClient.builder(LockBackendProvider.factoryFor("mem:engine-close-test")
                        .andThen(backend -> (LockBackend) Proxy.newProxyInstance(
                                LockBackend.class.getClassLoader(),
                                new Class<?>[] {LockBackend.class},
                                (proxy, method, args) -> {
                                    if (method.getName().equals("release") && otherClosed.compareAndSet(false, true)) {
                                        // While close releases one lease, the other one ends on its own.
                                        String other =
                                                ((LockKey) args[0]).name().equals("a") ? "b" : "a";
                                        leases.get(other).close();
                                    }
                                    if (method.getName().equals("close")) {
                                        backendClosed.set(true);
                                    }
                                    try {
                                        return method.invoke(backend, args);
                                    } catch (InvocationTargetException e) {
                                        throw e.getCause();
                                    }
                                })))
                .namespace("engine-close")
                .build();
        leases.put("a", client.lock("a").acquire(Duration.ofSeconds(1)));
        leases.put("b", client.lock("b").acquire(Duration.ofSeconds(1)));

        assertThatCode(client::close).doesNotThrowAnyException();

        assertThat(otherClosed).isTrue();
        assertThat(backendClosed).isTrue();
        assertThat(leases.values()).noneMatch(Lease::isValid);
    }
}
