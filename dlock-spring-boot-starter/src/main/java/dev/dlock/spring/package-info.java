/**
 * Spring Boot 4 support for dlock: a {@link dev.dlock.LockClient} bean configured by {@code dlock.*}
 * properties ({@link dev.dlock.spring.DlockProperties}), the {@link dev.dlock.spring.WithLock}
 * annotation, Micrometer metrics, an actuator health indicator and endpoint, and a fail-fast check that
 * the lock store is reachable when the application starts.
 */
package dev.dlock.spring;
