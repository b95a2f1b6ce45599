package dev.dlock.mem;

import dev.dlock.spi.LockBackendFactory;
import dev.dlock.spi.LockBackendProvider;

/**
 * Serves {@code mem:} and {@code mem:NAME} URIs from a {@link MemoryStore}. Registered with {@link
 * java.util.ServiceLoader}; applications do not use it directly.
 */
public final class MemoryBackendProvider implements LockBackendProvider {
    /** Creates the provider (called by {@link java.util.ServiceLoader}). */
    public MemoryBackendProvider() {}

    @Override
    public boolean accepts(String uri) {
        return uri != null && uri.startsWith("mem:");
    }

    @Override
    public LockBackendFactory factory(String uri) {
        String name = uri.substring("mem:".length());
        while (name.startsWith("/")) {
            name = name.substring(1);
        }
        MemoryStore store = MemoryStore.named(name.isEmpty() ? "default" : name);
        return context -> new MemoryBackend(store);
    }
}
