/**
 * The Redis backend (Lettuce): standalone, Sentinel and Cluster servers, every lock kind, fencing tokens
 * made in the granting script, wake-ups by pub/sub, renewals batched per node.
 *
 * <p>Use {@code LockClient.connect("redis://host:6379")} (see {@link dev.dlock.redis.RedisBackendProvider}
 * for the URI forms) or {@link dev.dlock.redis.RedisBackends} with an existing Lettuce client; Redlock
 * over independent masters is {@link dev.dlock.redis.RedlockBackends}.
 */
package dev.dlock.redis;
