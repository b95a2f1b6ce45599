package dev.dlock.zookeeper;

import dev.dlock.spi.LockBackendFactory;
import dev.dlock.spi.LockBackendProvider;
import java.nio.charset.StandardCharsets;
import java.util.Arrays;
import java.util.Collections;
import java.util.List;
import org.apache.curator.framework.CuratorFramework;
import org.apache.curator.framework.CuratorFrameworkFactory;
import org.apache.curator.framework.api.ACLProvider;
import org.apache.curator.retry.RetryUntilElapsed;
import org.apache.zookeeper.ZooDefs;
import org.apache.zookeeper.data.ACL;

/**
 * Serves {@code zookeeper://} URIs. Registered with {@link java.util.ServiceLoader}; applications call
 * {@code LockClient.connect("zookeeper://...")} and never use this class directly.
 *
 * <p>URI: {@code zookeeper://[user:password@]host:port[,host:port...][/chroot][?sessionTimeout=15s]}. The
 * client it opens has a connection timeout and a retry budget equal to the dlock operation timeout, so
 * that a request gives up in time; it is closed with the {@code LockClient}.
 */
public final class ZooKeeperBackendProvider implements LockBackendProvider {
    /** Creates the provider (called by {@link java.util.ServiceLoader}). */
    public ZooKeeperBackendProvider() {}

    @Override
    public boolean accepts(String uri) {
        return uri != null && uri.startsWith(ZooKeeperUri.SCHEME);
    }

    @Override
    public LockBackendFactory factory(String uri) {
        ZooKeeperUri parsed = ZooKeeperUri.parse(uri);
        return context -> {
            int timeoutMs = (int) Math.min(
                    Integer.MAX_VALUE, Math.max(1, context.operationTimeout().toMillis()));
            CuratorFrameworkFactory.Builder builder = CuratorFrameworkFactory.builder()
                    .connectString(parsed.connectString())
                    .sessionTimeoutMs(parsed.sessionTimeoutMs())
                    .connectionTimeoutMs(timeoutMs)
                    .retryPolicy(new RetryUntilElapsed(timeoutMs, Math.max(1, Math.min(100, timeoutMs / 10))))
                    .namespace(parsed.chroot());
            if (parsed.user() != null) {
                builder.authorization(
                                "digest", (parsed.user() + ":" + parsed.password()).getBytes(StandardCharsets.UTF_8))
                        .aclProvider(new OwnerOnlyAcl());
            }
            CuratorFramework client = builder.build();
            client.start();
            return ZooKeeperBackend.open(client, true, parsed.sessionTimeoutMs(), context);
        };
    }

    /** With digest authentication: the creating identity may do everything, anybody else only read. */
    private static final class OwnerOnlyAcl implements ACLProvider {
        // Not List.of: ZooKeeper asks the list whether it contains null, which List.of answers with an NPE.
        private static final List<ACL> ACL = Collections.unmodifiableList(Arrays.asList(
                new ACL(ZooDefs.Perms.ALL, ZooDefs.Ids.AUTH_IDS),
                new ACL(ZooDefs.Perms.READ, ZooDefs.Ids.ANYONE_ID_UNSAFE)));

        @Override
        public List<ACL> getDefaultAcl() {
            return ACL;
        }

        @Override
        public List<ACL> getAclForPath(String path) {
            return ACL;
        }
    }
}
