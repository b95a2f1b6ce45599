/**
 * The ZooKeeper backend, on Curator. Serves {@code zookeeper://} URIs through {@code LockClient.connect};
 * {@code ZooKeeperBackends} takes a Curator client, hence the transitive {@code curator.framework}. Curator
 * and ZooKeeper jars carry no module name: theirs ({@code curator.framework}, {@code curator.client},
 * {@code zookeeper}) are derived from the jar file names; keep those file names (artifactId-version.jar)
 * on the module path. ZooKeeper's {@code zookeeper-jute} jar shares two packages with {@code zookeeper}: it
 * cannot be a module of its own, so it is patched into {@code zookeeper}
 * ({@code --patch-module zookeeper=zookeeper-jute-VERSION.jar}).
 */
@SuppressWarnings("requires-transitive-automatic") // its types are in this module's API
module dev.dlock.zookeeper {
    requires transitive dev.dlock.core;
    requires transitive curator.framework;
    requires curator.client;
    requires zookeeper;

    exports dev.dlock.zookeeper;

    provides dev.dlock.spi.LockBackendProvider with
            dev.dlock.zookeeper.ZooKeeperBackendProvider;
}
