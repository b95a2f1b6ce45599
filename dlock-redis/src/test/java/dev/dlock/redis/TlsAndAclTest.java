package dev.dlock.redis;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;

import dev.dlock.DistributedReadWriteLock;
import dev.dlock.Lease;
import dev.dlock.LeaseLostException;
import dev.dlock.LockBackendException;
import dev.dlock.LockClient;
import io.lettuce.core.ClientOptions;
import io.lettuce.core.RedisClient;
import io.lettuce.core.RedisURI;
import io.lettuce.core.SslOptions;
import java.io.FileInputStream;
import java.nio.file.Files;
import java.nio.file.Path;
import java.security.KeyStore;
import java.security.PrivateKey;
import java.security.cert.Certificate;
import java.time.Duration;
import java.util.Base64;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.TimeUnit;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;

/** TLS ({@code --tls-port}, a self-signed certificate made here) and an ACL user limited to the namespace. */
class TlsAndAclTest {
    @TempDir
    Path certificates;

    @Test
    void locksWorkOverTls() throws Exception {
        Path cert = certificates.resolve("cert.pem");
        Path key = certificates.resolve("key.pem");
        selfSignedCertificate(cert, key);
        int tlsPort = RedisServer.freePort();
        try (RedisServer server = RedisServer.start(
                "--tls-port", Integer.toString(tlsPort),
                "--tls-cert-file", cert.toString(),
                "--tls-key-file", key.toString(),
                "--tls-ca-cert-file", cert.toString(),
                "--tls-auth-clients", "no")) {
            server.markFresh("dlock"); // a fresh server: no hold-back (the default is on in this test)
            // A Lettuce client that trusts exactly this certificate and checks the host name.
            RedisClient redis = RedisClient.create(RedisURI.builder()
                    .withHost("127.0.0.1")
                    .withPort(tlsPort)
                    .withSsl(true)
                    .withVerifyPeer(true)
                    .build());
            redis.setOptions(ClientOptions.builder()
                    .sslOptions(SslOptions.builder()
                            .jdkSslProvider()
                            .trustManager(cert.toFile())
                            .build())
                    .build());
            try (LockClient client = LockClient.builder(RedisBackends.of(redis)).build()) {
                exerciseEveryKind(client);
            } finally {
                redis.shutdown();
            }
            // From a URI: encrypted; the self-signed certificate is refused unless verification is off.
            try (LockClient client = LockClient.builder(
                            "rediss://127.0.0.1:" + tlsPort + "?verifyPeer=NONE&maxLease=30s")
                    .build()) {
                exerciseEveryKind(client);
            }
            assertThatThrownBy(() -> LockClient.builder("rediss://127.0.0.1:" + tlsPort)
                            .operationTimeout(Duration.ofSeconds(2))
                            .build())
                    .isInstanceOf(LockBackendException.class);
            // The TLS clients' fencing-token counters are on the server (read over the plain port).
            assertThat((Long) server.call("DBSIZE")).isPositive();
        }
    }

    @Test
    void anAclUserLimitedToTheNamespaceCanUseEveryKind() throws Exception {
        try (RedisServer server = RedisServer.start()) {
            server.markFresh("dlock"); // a fresh server: no hold-back (the default is on in this test)
            server.call(
                    "ACL",
                    "SETUSER",
                    "locker",
                    "on",
                    ">s3cret",
                    "resetkeys",
                    "~dlock:*",
                    "resetchannels",
                    "&dlock:*",
                    "+@all");
            String uri = "redis://locker:s3cret@127.0.0.1:" + server.port();
            try (LockClient client = LockClient.builder(uri).build()) {
                exerciseEveryKind(client);
                assertThat(client.list("")).isEmpty();
            }
            // The ACL is really enforced: another namespace is outside the user's key pattern.
            try (LockClient outside = LockClient.builder(uri)
                    .namespace("other")
                    .operationTimeout(Duration.ofSeconds(2))
                    .build()) {
                assertThatThrownBy(() -> outside.lock("x").tryAcquire())
                        .isInstanceOf(LockBackendException.class)
                        .hasMessageContaining("NOPERM");
            }
            assertThatThrownBy(() -> LockClient.builder("redis://locker:wrong@127.0.0.1:" + server.port())
                            .operationTimeout(Duration.ofSeconds(2))
                            .build())
                    .isInstanceOf(LockBackendException.class)
                    .hasMessageNotContaining("wrong");
        }
    }

    /** Exclusive, fair, read-write, semaphore, a wait woken by pub/sub, describe and force-release. */
    private static void exerciseEveryKind(LockClient client) throws Exception {
        Lease lock = client.lock("kinds").acquire(Duration.ofSeconds(5));
        CompletableFuture<Lease> waiter = client.lock("kinds").acquireAsync(Duration.ofSeconds(10));
        Thread.sleep(100);
        assertThat(waiter).isNotDone();
        lock.close();
        waiter.get(5, TimeUnit.SECONDS).close();
        client.fairLock("kinds").acquire(Duration.ofSeconds(5)).close();
        DistributedReadWriteLock rw = client.readWriteLock("kinds");
        try (Lease r1 = rw.readLock().acquire(Duration.ofSeconds(5));
                Lease r2 = client.readWriteLock("kinds")
                        .readLock()
                        .acquireAsync(Duration.ofSeconds(5))
                        .get()) {
            assertThat(r1.fencingToken()).isNotEqualTo(r2.fencingToken());
        }
        rw.writeLock().acquire(Duration.ofSeconds(5)).close();
        try (Lease permit = client.semaphore("kinds", 2).acquire(Duration.ofSeconds(5))) {
            assertThat(client.describe("kinds")).hasSize(1);
            assertThat(client.forceRelease("kinds")).isTrue();
            assertThatThrownBy(() -> permit.extend(Duration.ofSeconds(30))).isInstanceOf(LeaseLostException.class);
            assertThat(client.describe("kinds")).isEmpty();
        }
    }

    /** Makes a self-signed certificate for 127.0.0.1 with the JDK's keytool and writes PEM files. */
    private void selfSignedCertificate(Path certPem, Path keyPem) throws Exception {
        Path store = certificates.resolve("server.p12");
        String keytool =
                Path.of(System.getProperty("java.home"), "bin", "keytool").toString();
        Process p = new ProcessBuilder(
                        keytool,
                        "-genkeypair",
                        "-alias",
                        "redis",
                        "-keyalg",
                        "RSA",
                        "-keysize",
                        "2048",
                        "-validity",
                        "2",
                        "-dname",
                        "CN=localhost",
                        "-ext",
                        "SAN=ip:127.0.0.1,dns:localhost",
                        "-keystore",
                        store.toString(),
                        "-storetype",
                        "PKCS12",
                        "-storepass",
                        "changeit",
                        "-keypass",
                        "changeit")
                .redirectErrorStream(true)
                .start();
        String output = new String(p.getInputStream().readAllBytes());
        assertThat(p.waitFor()).as("keytool: " + output).isZero();
        KeyStore keyStore = KeyStore.getInstance("PKCS12");
        try (FileInputStream in = new FileInputStream(store.toFile())) {
            keyStore.load(in, "changeit".toCharArray());
        }
        PrivateKey key = (PrivateKey) keyStore.getKey("redis", "changeit".toCharArray());
        Certificate cert = keyStore.getCertificate("redis");
        Files.writeString(keyPem, pem("PRIVATE KEY", key.getEncoded()));
        Files.writeString(certPem, pem("CERTIFICATE", cert.getEncoded()));
    }

    private static String pem(String type, byte[] der) {
        return "-----BEGIN " + type + "-----\n"
                + Base64.getMimeEncoder(64, "\n".getBytes()).encodeToString(der)
                + "\n-----END " + type + "-----\n";
    }
}
