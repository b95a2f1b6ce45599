package dev.dlock.spring;

import dev.dlock.LockClient;

/**
 * A bean of this type adjusts the {@link LockClient.Builder} after the {@code dlock.*} properties were
 * applied and before the client connects, for example to wrap the backend:
 * {@code builder.backend(builder.backend().andThen(CountingBackend::new))} (see {@link
 * LockClient.Builder#backend(dev.dlock.spi.LockBackendFactory)}). Customizers run in {@link
 * org.springframework.core.Ordered} order.
 */
@FunctionalInterface
public interface LockClientBuilderCustomizer {
    /**
     * Adjusts the builder.
     *
     * @param builder the builder, with the properties applied
     */
    void customize(LockClient.Builder builder);
}
