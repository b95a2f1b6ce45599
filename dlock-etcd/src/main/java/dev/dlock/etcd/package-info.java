/**
 * The etcd backend for dlock, on jetcd's KV, Watch and Lease APIs: {@code LockClient.connect("etcd://...")}
 * (see {@link dev.dlock.etcd.EtcdBackendProvider}) or {@link dev.dlock.etcd.EtcdBackends#of} for an
 * existing jetcd {@code Client}.
 *
 * <p>Every acquisition is a key on the client's single etcd lease; the holder is the key with the smallest
 * create revision (the first {@code permits} keys for a semaphore), and the fencing token is that create
 * revision times 16, which leaves 14 tokens of room after each grant for the engine's cohort hand-off and
 * one for a read the writer downgrades to. The engine's watchdog keeps the lease alive with one keep-alive
 * per tick; a lease that expires, is revoked or goes unanswered for its TTL makes every hold of the client
 * lost, and its holders are told.
 */
package dev.dlock.etcd;
