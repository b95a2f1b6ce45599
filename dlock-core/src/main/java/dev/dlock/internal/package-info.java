/**
 * The engine. Not an API: only {@link dev.dlock.internal.Engine} and {@link dev.dlock.internal.EngineOptions}
 * are public, so that {@code dev.dlock.LockClient} can reach them; everything else is package-private.
 * Both may change in any release.
 */
package dev.dlock.internal;
