/**
 * Micrometer meters for dlock: {@link dev.dlock.micrometer.MicrometerLockListener} records the contention of
 * any {@link dev.dlock.LockClient} it is given to (wait and hold time, outcomes, lost leases, queues).
 */
package dev.dlock.micrometer;
