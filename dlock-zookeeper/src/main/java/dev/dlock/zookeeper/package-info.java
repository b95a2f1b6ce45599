/**
 * The ZooKeeper backend for dlock, on the Curator framework: {@code LockClient.connect("zookeeper://...")}
 * (see {@link dev.dlock.zookeeper.ZooKeeperBackendProvider}) or {@link
 * dev.dlock.zookeeper.ZooKeeperBackends#of} for an existing {@code CuratorFramework}.
 *
 * <p>The lease of every hold is the ZooKeeper session: holds are ephemeral nodes, renewals send nothing,
 * and a session without a reply for nearly its timeout, lost or expired makes every lease of the client
 * invalid and fires its lost signal (the engine's watchdog decides, from the session the backend hands it
 * as a {@link dev.dlock.spi.SessionLeases}). Fencing tokens are the czxid of the node times 16, which leaves
 * room for the engine's local hand-off and, just above it, for a read the writer downgrades to.
 */
package dev.dlock.zookeeper;
