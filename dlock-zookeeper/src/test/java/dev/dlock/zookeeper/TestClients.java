package dev.dlock.zookeeper;

import dev.dlock.LockClient;
import dev.dlock.LockInfo;
import dev.dlock.spi.ForwardingLockBackend;
import dev.dlock.spi.LockBackendFactory;
import dev.dlock.spi.LockBackendProvider;
import dev.dlock.spi.LockKey;
import java.util.Set;
import java.util.UUID;
import java.util.concurrent.CompletionStage;
import java.util.concurrent.ConcurrentHashMap;
import org.apache.curator.framework.CuratorFramework;

/**
 * Reaches the ZooKeeper backend behind a {@code LockClient}, for tests that inject session faults.
 *
 * <p>How, without reaching into the client: a client whose backend was opened through {@link
 * #recording} has a {@link Recorded} wrapper (through the SPI's {@code LockBackendFactory.andThen})
 * that notes the last name it was asked to describe. {@link #backend} asks the client to describe a name
 * nobody else uses and picks the wrapper that saw it, so it works for clients built elsewhere (the
 * contract suite builds its own) and through any further wrappers.
 */
final class TestClients {
    /** Every backend opened through {@link #recording} and not closed yet. */
    private static final Set<Recorded> OPEN = ConcurrentHashMap.newKeySet();

    private TestClients() {}

    /** A factory whose backends {@link #backend} can find. */
    static LockBackendFactory recording(LockBackendFactory factory) {
        return factory.andThen(opened -> {
            if (!(opened instanceof ZooKeeperBackend zk)) {
                throw new IllegalStateException("not a ZooKeeper backend: " + opened);
            }
            Recorded recorded = new Recorded(zk);
            OPEN.add(recorded);
            return recorded;
        });
    }

    /** A builder for a URI whose backend {@link #backend} can find. */
    static LockClient.Builder builder(String uri) {
        return LockClient.builder(recording(LockBackendProvider.factoryFor(uri)));
    }

    /**
     * The backend of a client built through {@link #recording}. The client must be able to reach its
     * store (it describes a name once).
     */
    static ZooKeeperBackend backend(LockClient client) {
        String probe = "test-clients-probe-" + UUID.randomUUID();
        client.describe(probe);
        for (Recorded recorded : OPEN) {
            if (probe.equals(recorded.lastDescribed)) {
                return recorded.zk;
            }
        }
        throw new IllegalStateException("not a client built through TestClients.recording: " + client);
    }

    /** The Curator client behind a {@code LockClient}. */
    static CuratorFramework curator(LockClient client) {
        return backend(client).curator();
    }

    /** Notes the last name described through it; forwards everything. */
    private static final class Recorded extends ForwardingLockBackend {
        final ZooKeeperBackend zk;
        volatile String lastDescribed;

        Recorded(ZooKeeperBackend zk) {
            super(zk);
            this.zk = zk;
        }

        @Override
        public CompletionStage<LockInfo> describe(LockKey key) {
            lastDescribed = key.name();
            return super.describe(key);
        }

        @Override
        public void close() {
            OPEN.remove(this);
            super.close();
        }
    }
}
