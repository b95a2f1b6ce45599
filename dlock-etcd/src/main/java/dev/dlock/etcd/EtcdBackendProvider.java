package dev.dlock.etcd;

import dev.dlock.spi.LockBackendFactory;
import dev.dlock.spi.LockBackendProvider;
import io.etcd.jetcd.Client;
import io.etcd.jetcd.ClientBuilder;
import java.nio.charset.StandardCharsets;
import java.time.Duration;
import javax.net.ssl.SSLException;

/**
 * Serves {@code etcd://} and {@code etcds://} URIs. Registered with {@link java.util.ServiceLoader};
 * applications call {@code LockClient.connect("etcd://...")} and never use this class directly.
 *
 * <p>URI: {@code etcd://host[:port][,host[:port]...][/prefix][?user=..&password=..][&allowStaleLeaderRevoke=true]}; {@code etcds://}
 * connects with TLS, trusting the JDK's certificate authorities. The port defaults to 2379. The jetcd
 * client it opens gives up connecting and retrying after the dlock operation timeout, and is closed with
 * the {@code LockClient}. For an application's own jetcd client, see {@link EtcdBackends#of}.
 *
 * <p>A cluster whose members run an etcd before 3.4.31 or 3.5.13 is refused at open: a stalled leader
 * there may revoke live leases when it resumes (etcd-io/etcd#15247). {@code ?allowStaleLeaderRevoke=true}
 * accepts it with a warning in the log.
 */
public final class EtcdBackendProvider implements LockBackendProvider {
    /** Creates the provider (called by {@link java.util.ServiceLoader}). */
    public EtcdBackendProvider() {}

    @Override
    public boolean accepts(String uri) {
        return EtcdUri.accepts(uri);
    }

    @Override
    public LockBackendFactory factory(String uri) {
        EtcdUri parsed = EtcdUri.parse(uri);
        boolean tls = uri.startsWith(EtcdUri.TLS_SCHEME);
        return context -> {
            // jetcd retries failed calls; its retries end within the operation timeout (jetcd requires the
            // retry delays to be shorter than the longest delay, and that shorter than the retry budget).
            long timeoutMillis = Math.max(1, context.operationTimeout().toMillis());
            long retryDelay = Math.max(1, timeoutMillis / 10);
            long retryMaxDelay = Math.max(retryDelay + 1, timeoutMillis / 2);
            ClientBuilder builder = Client.builder()
                    .endpoints(parsed.endpoints().toArray(String[]::new))
                    .connectTimeout(context.operationTimeout())
                    .retryDelay(retryDelay)
                    .retryMaxDelay(retryMaxDelay)
                    .retryMaxDuration(Duration.ofMillis(Math.max(timeoutMillis, retryMaxDelay + 1)))
                    .waitForReady(false);
            if (parsed.user() != null) {
                builder.user(KeyLayout.bytes(parsed.user()))
                        .password(io.etcd.jetcd.ByteSequence.from(parsed.password(), StandardCharsets.UTF_8));
            }
            if (tls) {
                try {
                    builder.sslContext(ssl -> {});
                } catch (SSLException e) {
                    throw new IllegalStateException("could not set up TLS for " + EtcdUri.redact(uri) + ": " + e, e);
                }
            }
            return EtcdBackend.open(builder.build(), true, parsed.prefix(), context, parsed.allowStaleLeaderRevoke());
        };
    }
}
