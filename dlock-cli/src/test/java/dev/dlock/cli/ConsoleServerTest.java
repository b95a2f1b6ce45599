package dev.dlock.cli;

import static org.assertj.core.api.Assertions.assertThat;

import dev.dlock.Lease;
import dev.dlock.LockClient;
import java.net.InetAddress;
import java.net.InetSocketAddress;
import java.net.Socket;
import java.net.URI;
import java.net.http.HttpClient;
import java.net.http.HttpRequest;
import java.net.http.HttpResponse;
import java.nio.charset.StandardCharsets;
import java.time.Duration;
import java.util.Map;
import org.junit.jupiter.api.AfterEach;
import org.junit.jupiter.api.Test;

/** The console's HTTP side in process, on the in-memory store: pages, JSON, and who may release. */
class ConsoleServerTest {
    final LockClient client =
            LockClient.builder("mem:console-" + System.nanoTime()).build();
    final LockWatcher watcher = new LockWatcher(
            () -> client.list(""), client::heldBack, System::nanoTime, System::currentTimeMillis, 600_000);
    final HttpClient http = HttpClient.newHttpClient();
    ConsoleServer server;

    @AfterEach
    void tearDown() {
        if (server != null) {
            server.close();
        }
        client.close();
    }

    void start(boolean allowRelease) throws Exception {
        start(allowRelease, InetAddress.getLoopbackAddress());
    }

    void start(boolean allowRelease, InetAddress bind) throws Exception {
        server = ConsoleServer.start(
                new InetSocketAddress(bind, 0),
                watcher,
                allowRelease ? client::forceRelease : null,
                Map.of("store", "mem:", "namespace", "dlock", "pollMillis", 1000L, "windowMillis", 600_000L));
    }

    HttpResponse<String> send(String method, String path, String... headers) throws Exception {
        HttpRequest.Builder request = HttpRequest.newBuilder(URI.create("http://127.0.0.1:" + server.port() + path))
                .timeout(Duration.ofSeconds(10))
                .method(method, HttpRequest.BodyPublishers.noBody());
        for (int i = 0; i < headers.length; i += 2) {
            request.header(headers[i], headers[i + 1]);
        }
        return http.send(request.build(), HttpResponse.BodyHandlers.ofString());
    }

    @Test
    void servesThePageAndTheLocksAsJson() throws Exception {
        start(false);
        try (Lease lease = client.lock("job:<b>").acquire()) {
            watcher.poll();
            HttpResponse<String> page = send("GET", "/");
            assertThat(page.statusCode()).isEqualTo(200);
            assertThat(page.headers().firstValue("Content-Type")).hasValue("text/html; charset=utf-8");
            assertThat(page.headers().firstValue("Content-Security-Policy"))
                    .hasValueSatisfying(csp -> assertThat(csp).contains("default-src 'self'"));
            assertThat(page.body()).contains("<script src=\"/console.js\"");
            assertThat(send("GET", "/console.js").body()).contains("/api/locks");
            assertThat(send("GET", "/console.css").statusCode()).isEqualTo(200);
            assertThat(send("GET", "/nothing").statusCode()).isEqualTo(404);

            HttpResponse<String> locks = send("GET", "/api/locks");
            assertThat(locks.statusCode()).isEqualTo(200);
            assertThat(locks.headers().firstValue("Content-Type")).hasValue("application/json");
            assertThat(locks.body())
                    .contains("\"allowRelease\":false")
                    .contains("\"name\":\"job:\\u003cb\\u003e\"")
                    .contains("\"token\":" + lease.fencingToken())
                    .contains("\"heldBeforeConsole\":true")
                    .doesNotContain("<b>");
            assertThat(send("GET", "/api/events?since=0").body()).contains("\"events\":[]");
        }
        watcher.poll();
        assertThat(send("GET", "/api/events?since=0").body())
                .contains("\"type\":\"release\"")
                .contains("\"name\":\"job:\\u003cb\\u003e\"");
    }

    @Test
    void readOnlyConsoleRefusesReleaseWith403() throws Exception {
        start(false);
        try (Lease lease = client.lock("job").acquire()) {
            HttpResponse<String> refused =
                    send("POST", "/api/release?name=job", ConsoleServer.RELEASE_HEADER, "release");
            assertThat(refused.statusCode()).isEqualTo(403);
            assertThat(refused.body()).contains("--allow-release");
            assertThat(lease.isValid()).isTrue();
            assertThat(client.describe("job")).isNotEmpty();
            assertThat(send("DELETE", "/api/locks").statusCode()).isEqualTo(405);
        }
    }

    @Test
    void releaseNeedsTheHeaderAndReleases() throws Exception {
        start(true);
        client.lock("job").acquire();
        watcher.poll();
        HttpResponse<String> noHeader = send("POST", "/api/release?name=job");
        assertThat(noHeader.statusCode()).isEqualTo(403);
        assertThat(client.describe("job")).isNotEmpty();
        assertThat(send("GET", "/api/release?name=job").statusCode()).isEqualTo(405);
        assertThat(send("POST", "/api/release", ConsoleServer.RELEASE_HEADER, "release")
                        .statusCode())
                .isEqualTo(400);

        HttpResponse<String> released = send("POST", "/api/release?name=job", ConsoleServer.RELEASE_HEADER, "release");
        assertThat(released.statusCode()).isEqualTo(200);
        assertThat(released.body()).contains("\"released\":true");
        assertThat(client.describe("job")).isEmpty();
        assertThat(send("GET", "/api/events").body()).contains("\"type\":\"force-release\"");
    }

    @Test
    void foreignHostHeaderIsRefusedOnLoopback() throws Exception {
        start(false);
        // DNS rebinding: a page of evil.example resolved to 127.0.0.1 sends Host: evil.example.
        try (Socket socket = new Socket(InetAddress.getLoopbackAddress(), server.port())) {
            socket.setSoTimeout(10_000);
            socket.getOutputStream()
                    .write("GET /api/locks HTTP/1.1\r\nHost: evil.example\r\nConnection: close\r\n\r\n"
                            .getBytes(StandardCharsets.US_ASCII));
            String answer = new String(socket.getInputStream().readAllBytes(), StandardCharsets.US_ASCII);
            assertThat(answer).startsWith("HTTP/1.1 403").doesNotContain("\"locks\"");
        }
        HttpResponse<String> local = http.send(
                HttpRequest.newBuilder(URI.create("http://localhost:" + server.port() + "/api/locks"))
                        .build(),
                HttpResponse.BodyHandlers.ofString());
        assertThat(local.statusCode()).isEqualTo(200);
    }

    @Test
    void onAnotherLoopbackAddressItsOwnAddressAndPortAreTheOnlyOtherHostAccepted() throws Exception {
        InetAddress other = InetAddress.getByName("127.0.0.2");
        start(false, other);
        int port = server.port();
        assertThat(rawGet(other, "127.0.0.2:" + port)).startsWith("HTTP/1.1 200");
        assertThat(rawGet(other, "localhost:" + port)).startsWith("HTTP/1.1 200");
        assertThat(rawGet(other, "127.0.0.2:" + (port == 65535 ? port - 1 : port + 1)))
                .startsWith("HTTP/1.1 403");
        assertThat(rawGet(other, "127.0.0.2")).startsWith("HTTP/1.1 403");
        assertThat(rawGet(other, "evil.example:" + port)).startsWith("HTTP/1.1 403");
    }

    private String rawGet(InetAddress address, String host) throws Exception {
        try (Socket socket = new Socket(address, server.port())) {
            socket.setSoTimeout(10_000);
            socket.getOutputStream()
                    .write(("GET /api/locks HTTP/1.1\r\nHost: " + host + "\r\nConnection: close\r\n\r\n")
                            .getBytes(StandardCharsets.US_ASCII));
            return new String(socket.getInputStream().readAllBytes(), StandardCharsets.US_ASCII);
        }
    }
}
