/**
 * The etcd backend, on jetcd. Serves {@code etcd://} and {@code etcds://} URIs through
 * {@code LockClient.connect}; {@code EtcdBackends} takes a jetcd client, hence the transitive
 * {@code jetcd.core} (a name derived from the jar file name: jetcd's jars carry none). Netty's handler
 * module is read for the TLS context jetcd's builder takes.
 */
@SuppressWarnings("requires-transitive-automatic") // its types are in this module's API
module dev.dlock.etcd {
    requires transitive dev.dlock.core;
    requires transitive jetcd.core;
    requires io.netty.handler;

    exports dev.dlock.etcd;

    provides dev.dlock.spi.LockBackendProvider with
            dev.dlock.etcd.EtcdBackendProvider;
}
