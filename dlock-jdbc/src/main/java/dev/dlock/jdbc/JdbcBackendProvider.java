package dev.dlock.jdbc;

import dev.dlock.spi.LockBackendFactory;
import dev.dlock.spi.LockBackendProvider;
import java.util.Locale;

/**
 * Serves {@code jdbc:postgresql:}, {@code jdbc:mariadb:}, {@code jdbc:mysql:} and {@code jdbc:h2:} URIs
 * through {@code LockClient.connect}. Registered with {@link java.util.ServiceLoader}; applications do
 * not use it directly (see {@link JdbcBackends}).
 */
public final class JdbcBackendProvider implements LockBackendProvider {
    /** Creates the provider (called by {@link java.util.ServiceLoader}). */
    public JdbcBackendProvider() {}

    @Override
    public boolean accepts(String uri) {
        if (uri == null) {
            return false;
        }
        String lower = uri.toLowerCase(Locale.ROOT);
        return lower.startsWith("jdbc:postgresql:")
                || lower.startsWith("jdbc:mariadb:")
                || lower.startsWith("jdbc:mysql:")
                || lower.startsWith("jdbc:h2:");
    }

    @Override
    public LockBackendFactory factory(String uri) {
        return JdbcBackends.forUri(uri);
    }
}
