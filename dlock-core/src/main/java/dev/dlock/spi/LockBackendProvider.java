package dev.dlock.spi;

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
}
