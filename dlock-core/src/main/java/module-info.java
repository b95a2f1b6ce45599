/**
 * dlock's public API ({@code dev.dlock}), the backend SPI ({@code dev.dlock.spi}) and the in-memory store
 * ({@code dev.dlock.mem}). The lease engine ({@code dev.dlock.internal} and its sub-packages) is not
 * exported: applications reach it only through {@link dev.dlock.LockClient}. Backends are found with
 * {@link java.util.ServiceLoader}: a backend module {@code provides} {@link dev.dlock.spi.LockBackendProvider}
 * (on the class path, its {@code META-INF/services} entry does the same).
 */
module dev.dlock.core {
    exports dev.dlock;
    exports dev.dlock.spi;
    exports dev.dlock.mem;

    uses dev.dlock.spi.LockBackendProvider;

    provides dev.dlock.spi.LockBackendProvider with
            dev.dlock.mem.MemoryBackendProvider;
}
