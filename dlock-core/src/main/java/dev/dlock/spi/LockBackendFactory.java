package dev.dlock.spi;

/**
 * Opens a backend for one client. Backends offer factories built from objects the application already
 * has (a {@code DataSource}, a Lettuce client, a {@code CuratorFramework}); pass one to
 * {@code LockClient.builder(LockBackendFactory)}.
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
}
