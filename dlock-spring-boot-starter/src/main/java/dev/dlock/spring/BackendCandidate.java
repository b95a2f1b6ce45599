package dev.dlock.spring;

import dev.dlock.spi.LockBackendFactory;

/**
 * A lock store the application already has a client for, offered by a backend-specific configuration
 * (for example a Lettuce connection factory when dlock-redis is on the class path).
 *
 * @param kind {@code redis}, {@code jdbc} or {@code zookeeper}, as named by {@code dlock.backend}
 * @param description what the store is, for messages and the health details (no secrets)
 * @param factory opens the backend over the application's client
 */
record BackendCandidate(String kind, String description, LockBackendFactory factory) {}
