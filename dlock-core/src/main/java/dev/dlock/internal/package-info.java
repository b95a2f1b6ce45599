/**
 * The engine's assembly: {@link dev.dlock.internal.Engine} wires the parts in the sub-packages ({@code
 * view}, {@code wait}, {@code lease}, {@code store}, {@code base}, each referring only to those after it)
 * and {@link dev.dlock.internal.EngineOptions} is the options snapshot it reads. Not an API: public only
 * so that {@code dev.dlock.LockClient} can reach them; the module exports none of these packages, and
 * every type may change in any release.
 */
package dev.dlock.internal;
