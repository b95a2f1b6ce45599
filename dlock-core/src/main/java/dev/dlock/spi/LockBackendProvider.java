package dev.dlock.spi;

import java.util.LinkedHashSet;
import java.util.ServiceLoader;
import java.util.Set;

/**
 * Makes a backend reachable through {@code LockClient.connect(uri)}. Implementations are found with
 * {@link java.util.ServiceLoader}: list the class in
 * {@code META-INF/services/dev.dlock.spi.LockBackendProvider}.
 */
public interface LockBackendProvider {
    /**
     * Whether this provider handles the URI, judged by its scheme (for example {@code redis:}).
     *
     * @param uri the URI given to {@code LockClient.connect}
     * @return true when {@link #factory(String)} accepts it
     */
    boolean accepts(String uri);

    /**
     * A factory for backends connected to the URI. Parsing errors throw here, before anything connects.
     *
     * @param uri an accepted URI
     * @return a factory
     * @throws IllegalArgumentException naming what is wrong with the URI
     */
    LockBackendFactory factory(String uri);

    /**
     * The factory of the first provider on the class path (the thread's context class loader, then this
     * library's) that accepts a URI: what {@code LockClient.builder(uri)} opens. Useful to decorate a
     * URI-configured backend ({@link LockBackendFactory#andThen}).
     *
     * @param uri a backend URI, for example {@code mem:} or {@code redis://localhost:6379}
     * @return the provider's factory
     * @throws IllegalArgumentException if no provider accepts the URI, or the URI is malformed; the
     *     message names the scheme and the backends found, never the rest of the URI (it may hold a
     *     password)
     */
    static LockBackendFactory factoryFor(String uri) {
        if (uri == null) {
            throw new IllegalArgumentException("uri must not be null");
        }
        Set<String> seen = new LinkedHashSet<>(); // the two loaders are often one: list each backend once
        for (ClassLoader loader : new ClassLoader[] {
            Thread.currentThread().getContextClassLoader(), LockBackendProvider.class.getClassLoader()
        }) {
            if (loader == null) {
                continue;
            }
            for (LockBackendProvider provider : ServiceLoader.load(LockBackendProvider.class, loader)) {
                if (provider.accepts(uri)) {
                    return provider.factory(uri);
                }
                seen.add(provider.getClass().getSimpleName());
            }
        }
        int colon = uri.indexOf(':');
        String scheme = colon < 0 ? uri.substring(0, Math.min(uri.length(), 20)) : uri.substring(0, colon + 1);
        throw new IllegalArgumentException("no dlock backend on the class path accepts URIs of scheme '" + scheme
                + "' (backends found: " + seen + "); add the module for its scheme, e.g. dlock-redis for redis://");
    }
}
