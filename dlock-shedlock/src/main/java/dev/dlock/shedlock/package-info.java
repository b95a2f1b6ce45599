/**
 * ShedLock on dlock: {@link dev.dlock.shedlock.DlockLockProvider} is a ShedLock {@code LockProvider} over any
 * {@link dev.dlock.LockClient}, so {@code @SchedulerLock} jobs run on every dlock store unchanged; {@link
 * dev.dlock.shedlock.DlockLockAssert} gives a running job its lease and fencing token.
 */
package dev.dlock.shedlock;
