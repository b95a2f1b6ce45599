/**
 * dlock: distributed locks with one set of semantics over Redis, ZooKeeper, SQL databases and memory.
 * Start at {@link dev.dlock.LockClient}.
 */
package dev.dlock;
