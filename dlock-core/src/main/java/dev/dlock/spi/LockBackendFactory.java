package dev.dlock.spi;

import java.util.Objects;
import java.util.function.UnaryOperator;

/**
 * Opens a backend for one client. Backends offer factories built from objects the application already
 * has (a {@code DataSource}, a Lettuce client, a {@code CuratorFramework}); pass one to
 * {@code LockClient.builder(LockBackendFactory)}. {@link LockBackendProvider#factoryFor(String)} turns a
 * URI into the factory of the backend that accepts it.
 *
 * <p>Decorating: {@link #andThen(UnaryOperator)} wraps every backend a factory opens, which is how test
 * kits, benchmarks and metrics count, delay or fail store calls (usually with a {@link
 * ForwardingLockBackend}):
 *
 * <pre>{@code
 * LockClient client = LockClient.builder(
 *                 LockBackendProvider.factoryFor("mem:").andThen(backend -> new CountingBackend(backend)))
 *         .build();
 * }</pre>
 */
@FunctionalInterface
public interface LockBackendFactory {
    /**
     * Opens a backend. Connecting may block up to {@code context.operationTimeout()}.
     *
     * @param context timeouts and engine callbacks
     * @return an open backend, owned by the client that asked for it
     * @throws dev.dlock.LockBackendException when the store cannot be reached
     */
    LockBackend open(BackendContext context);

    /**
     * A factory that opens a backend with this one and hands it to {@code decorator}; the client talks to
     * what the decorator returns, which must keep the {@link LockBackend} contract. If the decorator
     * throws, the backend just opened is closed.
     *
     * @param decorator receives each opened backend, returns the one the client uses
     * @return the decorating factory
     */
    default LockBackendFactory andThen(UnaryOperator<LockBackend> decorator) {
        Objects.requireNonNull(decorator, "decorator must not be null");
        return context -> {
            LockBackend opened = open(context);
            try {
                return Objects.requireNonNull(decorator.apply(opened), "the decorator returned null");
            } catch (RuntimeException | Error e) {
                opened.close();
                throw e;
            }
        };
    }
}
