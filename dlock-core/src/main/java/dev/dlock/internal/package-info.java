/**
 * The engine. Not an API: types here are public only so that {@code dev.dlock} can reach them, and may
 * change in any release.
 */
package dev.dlock.internal;
