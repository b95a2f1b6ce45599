/**
 * The service-provider interface a store implements: a few atomic primitives ({@link
 * dev.dlock.spi.LockBackend}), found through {@link dev.dlock.spi.LockBackendProvider} by URI scheme or
 * opened from a {@link dev.dlock.spi.LockBackendFactory}. Application code does not use this package.
 */
package dev.dlock.spi;
