/**
 * Spring Integration on dlock: {@link dev.dlock.integration.DlockLockRegistry} is a Spring Integration 7
 * {@code RenewableLockRegistry} over any {@link dev.dlock.LockClient}, so aggregators, {@code
 * LockRequestHandlerAdvice} and {@code LockRegistryLeaderInitiator} run on every dlock store.
 */
package dev.dlock.integration;
